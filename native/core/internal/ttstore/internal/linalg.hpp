// Private: the BLAS/LAPACK headers and the OpenBLAS extras the core uses.
#pragma once

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// C = op(A) B (row-major, op(A) m x k, B k x n, beta 0) issued as tiles of C of about
// kGemmPieceWork multiply-adds each. OpenBLAS runs one threaded call to its end before another
// thread's call gets the BLAS threads, so a product of billions of multiply-adds would hold every
// other request's BLAS calls (other tenants' included) for its whole length; in tiles they wait a
// few milliseconds at most. Tiles at least 256 on a side keep the repacking of the operands (one
// block of op(A) and of B per tile) to about 1% of the multiply-adds.
inline constexpr double kGemmPieceWork = 536870912.0;  // 2^29 multiply-adds: milliseconds
inline void gemm_in_pieces(CBLAS_TRANSPOSE ta, int64_t m, int64_t n, int64_t k, const double* A, int64_t lda,
                           const double* B, int64_t ldb, double* C, int64_t ldc) {
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (work <= kGemmPieceWork) {
    cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    return;
  }
  const double side = std::sqrt(kGemmPieceWork / static_cast<double>(std::max<int64_t>(k, 1)));
  const int64_t rs = std::min(m, std::max<int64_t>(256, static_cast<int64_t>(side)));
  const int64_t cs =
      std::min(n, std::max<int64_t>(256, static_cast<int64_t>(kGemmPieceWork / (static_cast<double>(k) * rs))));
  for (int64_t i = 0; i < m; i += rs) {
    const int64_t h = std::min(rs, m - i);
    const double* a = ta == CblasNoTrans ? A + i * lda : A + i;  // rows of op(A): columns of A when transposed
    for (int64_t j = 0; j < n; j += cs) {
      const int64_t w = std::min(cs, n - j);
      cblas_dgemm(CblasRowMajor, ta, CblasNoTrans, h, w, k, 1.0, a, lda, B + j, ldb, 0.0, C + i * ldc + j, ldc);
    }
  }
}

// The Gram of the m x (N/m) reshape of a row-major unfolding of m_big rows (m divides m_big), from
// that unfolding's full symmetric Gram G: row a of the short unfolding is rows a*q .. a*q + q-1 of
// the long one (q = m_big / m), so each entry sums q diagonal entries of a q x q block.
inline std::vector<double> partial_trace(const std::vector<double>& G, int64_t m_big, int64_t m) {
  const int64_t q = m_big / m;
  std::vector<double> out(static_cast<std::size_t>(m * m));
  for (int64_t a = 0; a < m; ++a) {
    for (int64_t b = 0; b < m; ++b) {
      double s = 0;
      for (int64_t c = 0; c < q; ++c) s += G[(a * q + c) * m_big + b * q + c];
      out[a * m + b] = s;
    }
  }
  return out;
}

// LAPACK info != 0 is a numerical failure (non-convergence), not a caller's mistake.
inline void lapack_check(lapack_int info, const char* what) {
  if (info != 0) {
    throw std::runtime_error(std::string(what) + " failed (info " + std::to_string(info) + ")");
  }
}

}  // namespace tts::detail
