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
// C (m x n) = A (m x k) * B (k x n), row-major.
std::vector<double> matmul(int64_t m, int64_t k, int64_t n, const double* A, const double* B);

}  // namespace tts::detail
