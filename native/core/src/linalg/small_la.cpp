// QR / LQ / SVD of core unfoldings. A row-major p x q matrix is the column-major q x p matrix M^T,
// so LAPACK sees the transpose; each helper undoes that in its copy-out.
#include "ttstore/internal/small_la.hpp"

#include <algorithm>
#include <cmath>

#include "ttstore/internal/linalg.hpp"

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
  std::vector<double> A(M, M + p * q), Up(static_cast<std::size_t>(q * k)), VTp(static_cast<std::size_t>(k * p));
  s.resize(static_cast<std::size_t>(k));
  lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', q, p, A.data(), q, s.data(), Up.data(), q, VTp.data(), k);
  if (info > 0) {  // dgesdd did not converge: the slower QR-iteration driver usually does
    A.assign(M, M + p * q);
    std::vector<double> superb(static_cast<std::size_t>(k));
    info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'S', 'S', q, p, A.data(), q, s.data(), Up.data(), q, VTp.data(), k,
                          superb.data());
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

void sym_eig_small(int64_t m, std::vector<double>& G, std::vector<double>& w) {
  const auto at = [m](int64_t i, int64_t j) { return static_cast<std::size_t>(i * m + j); };
  std::vector<double> A(static_cast<std::size_t>(m * m)), V(static_cast<std::size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    V[at(i, i)] = 1.0;
    for (int64_t j = i; j < m; ++j) A[at(i, j)] = A[at(j, i)] = G[at(i, j)];
  }
  // Rotations until the off-diagonal part is below rounding of the whole (quadratic convergence:
  // a handful of sweeps); each zeroes A(p, q) by A <- J^T A J, V <- V J.
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, all = 0;
    for (int64_t i = 0; i < m; ++i) {
      all += A[at(i, i)] * A[at(i, i)];
      for (int64_t j = i + 1; j < m; ++j) off += A[at(i, j)] * A[at(i, j)];
    }
    if (off <= 1e-34 * (all + 2 * off)) break;
    for (int64_t p = 0; p < m; ++p) {
      for (int64_t q = p + 1; q < m; ++q) {
        const double apq = A[at(p, q)];
        if (apq == 0) continue;
        const double theta = (A[at(q, q)] - A[at(p, p)]) / (2 * apq);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < m; ++k) {
          const double akp = A[at(k, p)], akq = A[at(k, q)];
          A[at(k, p)] = c * akp - s * akq;
          A[at(k, q)] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < m; ++k) {
          const double apk = A[at(p, k)], aqk = A[at(q, k)];
          A[at(p, k)] = c * apk - s * aqk;
          A[at(q, k)] = s * apk + c * aqk;
          const double vkp = V[at(k, p)], vkq = V[at(k, q)];
          V[at(k, p)] = c * vkp - s * vkq;
          V[at(k, q)] = s * vkp + c * vkq;
        }
      }
    }
  }
  std::vector<int64_t> order(static_cast<std::size_t>(m));
  for (int64_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return A[at(a, a)] < A[at(b, b)]; });
  w.resize(static_cast<std::size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    w[i] = A[at(order[i], order[i])];
    for (int64_t j = 0; j < m; ++j) G[at(j, i)] = V[at(j, order[i])];
  }
}

std::vector<double> matmul(int64_t m, int64_t k, int64_t n, const double* A, const double* B) {
  std::vector<double> C(static_cast<std::size_t>(m * n));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, k, B, n, 0.0, C.data(), n);
  return C;
}

}  // namespace tts::detail
