// Backend facts and thread control.
#include <omp.h>

#include "linalg.hpp"
#include "ttstore/tt.hpp"

#ifndef TTS_VERSION
#define TTS_VERSION "0.0.0-dev"
#endif

namespace tts {

EngineInfo engine_info() {
  EngineInfo e;
  e.version = TTS_VERSION;
  e.backend = "cpu";
  std::string blas = openblas_get_config();
  const char* core = openblas_get_corename();
  if (core && *core) blas += std::string(" (") + core + ")";
  e.blas = blas;
  e.threads = omp_get_max_threads();
  return e;
}

void set_threads(int n) {
  if (n < 0) throw InvalidArgument("thread count must be >= 0 (0: all cores), got " + std::to_string(n));
  const int t = n == 0 ? omp_get_num_procs() : n;
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

}  // namespace tts
