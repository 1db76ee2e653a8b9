// Private: one truncation step of the TT-SVD sweep, in place on the working buffer.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/internal/rank_select.hpp"

namespace tts::detail {

struct StepResult {
  RankChoice choice;
  std::vector<double> core;   // U_r, m x r row-major (core shape r_prev x n x r)
  Route route = Route::Auto;  // the route taken (Direct for tall or square C)
  bool aborted = false;       // `hopeless` said stop: no core, W untouched
};

// From this many rows on, a TSQR step given `hopeless` looks at the singular values first.
constexpr int64_t kValuesFirstRows = 1024;

// W[0, m*K) holds C (m x K, row-major). Finds the rank-r truncation of C (threshold delta_sq on
// the discarded sum of sigma^2, rank cap max_rank, 0: none), returns U_r and leaves U_r^T C
// (r x K, row-major) in W[0, r*K). norm_sq bounds ||C||_F^2 (it decides Gram vs TSQR).
// known_gram: C C^T when the caller already has it (upper triangle at least; consumed).
// hopeless(r): whether keeping rank r here ends the sweep (compress() stops once its cores would
// outweigh the input); a large TSQR step asks it before computing any vectors.
StepResult factor_unfolding(double* W, int64_t m, int64_t K, double delta_sq, double norm_sq, int64_t max_rank,
                            Route force = Route::Auto, std::vector<double>* known_gram = nullptr,
                            const std::function<bool(int64_t)>& hopeless = nullptr);

// C C^T of the m x K row-major C: upper triangle of a row-major m x m matrix.
std::vector<double> gram(const double* C, int64_t m, int64_t K);

// OpenBLAS keeps a GEMM with m*n*k at or below this single-threaded, so such calls are safe from
// inside OpenMP threads (larger ones contend for its thread pool).
constexpr double kBlasTinyMNK = 262144.0;

}  // namespace tts::detail
