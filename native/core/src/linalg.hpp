// Private: the BLAS/LAPACK headers and the OpenBLAS extras the core uses.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ttstore/types.hpp"

extern "C" {
// Declared by OpenBLAS's cblas.h; repeated here so another CBLAS header still compiles.
char* openblas_get_config(void);
char* openblas_get_corename(void);
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
}

namespace tts::detail {

// An uninitialised float64 buffer: pages are touched only when written (RSS grows with use).
struct DoubleBuffer {
  std::unique_ptr<double[]> p;
  int64_t n = 0;
  DoubleBuffer() = default;
  explicit DoubleBuffer(int64_t size) : p(new double[static_cast<std::size_t>(size > 0 ? size : 1)]), n(size) {}
  double* data() { return p.get(); }
  const double* data() const { return p.get(); }
};

// LAPACK info != 0 is a numerical failure (non-convergence), not a caller's mistake.
inline void lapack_check(lapack_int info, const char* what) {
  if (info != 0) {
    throw std::runtime_error(std::string(what) + " failed (info " + std::to_string(info) + ")");
  }
}

}  // namespace tts::detail
