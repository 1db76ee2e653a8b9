// Private: the TT-SVD sweep with the extra facts compress() needs (error bound, cap, early stop).
#pragma once

#include <functional>
#include <string>

#include "ttstore/tt.hpp"

namespace tts::detail {

// How a wide unfolding is factored (see unfolding.cpp); Auto picks by the threshold's size.
enum class Route { Auto, Gram, MeasuredGram, Tsqr, Direct, Identity };

struct SvdRun {
  Route force_route = Route::Auto;  // In: tests force a route to compare them
  // In: > 0 stops the sweep as soon as the cores hold this many bytes at float32 (4 bytes an
  // element), since the train can then never be smaller than the input; `aborted` says so.
  int64_t abort_core_bytes = 0;
  // In: when set, a's numel values already gathered (float64, mode order); the sweep works in this
  // buffer, overwriting it, instead of gathering into one of its own.
  double* pregathered = nullptr;
  // In: when finite, the sum of squares of pregathered's values (spares the sweep that pass).
  double pregathered_sum_squares = std::numeric_limits<double>::quiet_NaN();
  // Out.
  double norm = 0;            // ||A||_F
  double discarded_sq = 0;    // sum of the discarded sigma^2 over the steps: ||A - TT||^2 in exact arithmetic
  bool capped = false;        // the rank cap cut a rank below what tol asked for
  bool aborted = false;       // stopped early by abort_core_bytes; the train is incomplete
  std::vector<Route> routes;  // the route of each step
};

void check_svd_options(const SvdOptions& opt);
void check_array(const ArrayView& a, const QttLayout& layout, const char* what);
// "<flat> (index [i, j, ...])": an element named by its flat C-order index and its array index.
std::string index_text(const QttLayout& layout, int64_t flat);
// W[t] = A[offset(t)] as float64 in mode order (numel entries); returns the sum of squares. Throws
// InvalidArgument on NaN/Inf, naming the first bad element in C order.
double gather(const ArrayView& a, const QttLayout& layout, double* W);

TensorTrain qtt_svd_run(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt, const ProgressFn& progress,
                        SvdRun& run);

// The rules every TT-SVD sweep follows (the CPU core's and the CUDA backend's), written once.
//
// The truncation threshold: the most each of the d - 1 steps over an array whose squares sum to
// sumsq may discard (a sum of sigma^2), so that the steps add up to (tol ||A||)^2; tol = 0 still
// drops singular values at the float64 rounding floor (16 eps ||A|| per step).
double step_threshold_sq(const SvdOptions& opt, int d, double sumsq);
// The early stop: do the cores kept so far (core_elems elements), plus the core of step `next` at
// full rank when every step so far kept full rank (`untruncated`: noise-like data), reach
// abort_core_bytes at 4 bytes an element? r is the rank entering step `next` and P the columns of
// its unfolding (r x P). Never true when abort_core_bytes <= 0 (no early stop asked for).
bool cores_would_outweigh(const QttLayout& layout, const SvdOptions& opt, int64_t core_elems, bool untruncated,
                          int next, int64_t r, int64_t P, int64_t abort_core_bytes);

// One decomposition within compress(): the train, or `aborted` (the cores outgrew the input).
struct SweepAttempt {
  TensorTrain tt;
  bool aborted = false;
  bool capped = false;  // the rank cap cut a rank below what tol asked for
  double norm = 0;      // ||A||_F
};

// compress()'s policy over any backend (the CPU core, the CUDA sweep): decompose at tol; keep float32
// cores when a measured fingerprint shows they meet tol; when the dtype cast of the reconstruction
// pushed the measured error past tol although the rank cap did not bind, decompose again at tol / 10
// (at most twice). `sweep(o, attempt)` decomposes; `measure(tt)` is a fingerprint from a real
// reconstruction.
CompressResult choose_cores(const SvdOptions& opt, int64_t original_bytes,
                            const std::function<SweepAttempt(const SvdOptions&, int)>& sweep,
                            const std::function<Fingerprint(const TensorTrain&)>& measure);

}  // namespace tts::detail
