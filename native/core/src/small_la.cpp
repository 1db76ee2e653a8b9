// QR / LQ / SVD of core unfoldings. A row-major p x q matrix is the column-major q x p matrix M^T,
// so LAPACK sees the transpose; each helper undoes that in its copy-out.
#include "small_la.hpp"

#include <algorithm>

#include "linalg.hpp"

namespace tts::detail {

void qr_rows(int64_t p, int64_t q, const double* M, std::vector<double>& Q, std::vector<double>& R) {
  const int64_t k = std::min(p, q);
  std::vector<double> A(static_cast<std::size_t>(p * q)), tau(static_cast<std::size_t>(k));
  for (int64_t i = 0; i < p; ++i) {
    for (int64_t j = 0; j < q; ++j) A[i + j * p] = M[i * q + j];  // column-major M
  }
  lapack_check(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, p, q, A.data(), p, tau.data()), "dgeqrf");
  R.assign(static_cast<std::size_t>(k * q), 0.0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = i; j < q; ++j) R[i * q + j] = A[i + j * p];
  }
  lapack_check(LAPACKE_dorgqr(LAPACK_COL_MAJOR, p, k, k, A.data(), p, tau.data()), "dorgqr");
  Q.resize(static_cast<std::size_t>(p * k));
  for (int64_t i = 0; i < p; ++i) {
    for (int64_t j = 0; j < k; ++j) Q[i * k + j] = A[i + j * p];
  }
}

void lq_rows(int64_t p, int64_t q, const double* M, std::vector<double>& L, std::vector<double>& Q) {
  // M^T (q x p) = Q1 R1 (QR of the column-major view, which is M's own memory): M = R1^T Q1^T.
  const int64_t k = std::min(p, q);
  std::vector<double> A(M, M + p * q), tau(static_cast<std::size_t>(k));
  lapack_check(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, q, p, A.data(), q, tau.data()), "dgeqrf");
  L.assign(static_cast<std::size_t>(p * k), 0.0);
  for (int64_t j = 0; j < p; ++j) {
    for (int64_t i = 0; i <= std::min(j, k - 1); ++i) L[j * k + i] = A[i + j * q];  // L = R1^T
  }
  lapack_check(LAPACKE_dorgqr(LAPACK_COL_MAJOR, q, k, k, A.data(), q, tau.data()), "dorgqr");
  A.resize(static_cast<std::size_t>(k * q));  // Q1 column-major (q x k) = Q1^T row-major (k x q)
  Q.swap(A);
}

void svd_rows(int64_t p, int64_t q, const double* M, std::vector<double>& U, std::vector<double>& s,
              std::vector<double>& Vt) {
  // SVD of the column-major view M^T (q x p) = U' S V'^T gives M = V' S U'^T.
  const int64_t k = std::min(p, q);
  std::vector<double> A(M, M + p * q), Up(static_cast<std::size_t>(q * k)),
      VTp(static_cast<std::size_t>(k * p));
  s.resize(static_cast<std::size_t>(k));
  lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', q, p, A.data(), q, s.data(), Up.data(), q,
                                   VTp.data(), k);
  if (info > 0) {  // dgesdd did not converge: the slower QR-iteration driver usually does
    A.assign(M, M + p * q);
    std::vector<double> superb(static_cast<std::size_t>(k));
    info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'S', 'S', q, p, A.data(), q, s.data(), Up.data(), q,
                          VTp.data(), k, superb.data());
  }
  lapack_check(info, "dgesdd/dgesvd");
  // U (p x k): U[j*k + i] = V'(j, i) = VT'(i, j) = VTp[i + j*k] -> same memory.
  U.swap(VTp);
  // Vt (k x q): Vt[i*q + c] = U'(c, i) = Up[c + i*q] -> same memory.
  Vt.swap(Up);
}

void svd_rows_left(int64_t p, int64_t q, const double* M, std::vector<double>& U, std::vector<double>& s) {
  std::vector<double> Vt;
  if (q <= 2 * p) {
    svd_rows(p, q, M, U, s, Vt);
    return;
  }
  // Wide M: M^T (q x p, column-major) = Q R by Householder QR, so M = R^T Q^T, and the SVD of the
  // small p x p matrix R^T = U S W^T gives M = U S (Q W)^T: U and s without forming Q or Q W.
  std::vector<double> A(M, M + p * q), tau(static_cast<std::size_t>(p));
  lapack_check(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, q, p, A.data(), q, tau.data()), "dgeqrf");
  // R^T, p x p row-major: (R^T)[i][j] = R(j, i) = A[j + i q] for j <= i.
  std::vector<double> Rt(static_cast<std::size_t>(p * p), 0.0);
  for (int64_t i = 0; i < p; ++i) {
    for (int64_t j = 0; j <= i; ++j) Rt[i * p + j] = A[j + i * q];
  }
  svd_rows(p, p, Rt.data(), U, s, Vt);
}

std::vector<double> matmul(int64_t m, int64_t k, int64_t n, const double* A, const double* B) {
  std::vector<double> C(static_cast<std::size_t>(m * n));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, k, B, n, 0.0, C.data(), n);
  return C;
}

}  // namespace tts::detail
