// Private: QR / LQ / SVD of small row-major matrices (core unfoldings), through LAPACKE.
#pragma once

#include <cstdint>
#include <vector>

namespace tts::detail {

// M (p x q, row-major) = Q R with Q p x k orthonormal columns, R k x q, k = min(p, q).
void qr_rows(int64_t p, int64_t q, const double* M, std::vector<double>& Q, std::vector<double>& R);
// M (p x q, row-major) = L Q with L p x k, Q k x q orthonormal rows, k = min(p, q).
void lq_rows(int64_t p, int64_t q, const double* M, std::vector<double>& L, std::vector<double>& Q);
// M (p x q, row-major) = U diag(s) Vt, thin (k = min(p, q)): U p x k, Vt k x q, s descending.
void svd_rows(int64_t p, int64_t q, const double* M, std::vector<double>& U, std::vector<double>& s,
              std::vector<double>& Vt);
// The same without Vt (for wide M, about half the work: the QR of M^T and the SVD of its p x p R):
// U p x k, s.
// Callers that need the kept rows of diag(s) Vt form them as U[:, :r]^T M.
void svd_rows_left(int64_t p, int64_t q, const double* M, std::vector<double>& U, std::vector<double>& s);
// Largest symmetric matrix sym_eig_small takes: its Jacobi sweeps cost about 8 m^3 a sweep, under a
// millisecond here, where dsyevd's would wait for OpenBLAS's threads (sym_eig_small says why).
constexpr int64_t kSmallEigRows = 32;
// The eigen-decomposition of a small symmetric matrix (m <= kSmallEigRows) by cyclic Jacobi rotations,
// without BLAS: OpenBLAS 0.3.21 threads even a tiny dsymv (in dsyevd's tridiagonal reduction), and a
// threaded call waits for the BLAS threads, so another tenant's large factorization held a small
// compress for up to a second. G (row-major, upper triangle read) becomes the eigenvectors as columns
// (G[j m + i] = component j of vector i), w the eigenvalues ascending: LAPACKE_dsyevd(ROW_MAJOR, 'V', 'U').
void sym_eig_small(int64_t m, std::vector<double>& G, std::vector<double>& w);
// C (m x n) = A (m x k) * B (k x n), row-major.
std::vector<double> matmul(int64_t m, int64_t k, int64_t n, const double* A, const double* B);

}  // namespace tts::detail
