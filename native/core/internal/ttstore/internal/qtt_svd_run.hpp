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
  double norm = 0;          // ||A||_F
  double discarded_sq = 0;  // sum of the discarded sigma^2 over the steps: ||A - TT||^2 in exact arithmetic
  bool capped = false;      // the rank cap cut a rank below what tol asked for
  bool aborted = false;     // stopped early by abort_core_bytes; the train is incomplete
  std::vector<Route> routes;  // the route of each step
};

void check_svd_options(const SvdOptions& opt);
void check_array(const ArrayView& a, const QttLayout& layout, const char* what);
// "<flat> (index [i, j, ...])": an element named by its flat C-order index and its array index.
std::string index_text(const QttLayout& layout, int64_t flat);
// W[t] = A[offset(t)] as float64 in mode order (numel entries); returns the sum of squares. Throws
// InvalidArgument on NaN/Inf, naming the first bad element in C order.
double gather(const ArrayView& a, const QttLayout& layout, double* W);

TensorTrain qtt_svd_run(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                        const ProgressFn& progress, SvdRun& run);

// The early stop of a sweep, shared by the CPU sweep and the CUDA one: would keeping rank r_here at
// step k of the m x K unfolding (and full rank at step k + 1, as every step so far did), on top of
// the core_elems elements kept already, make the cores reach abort_core_bytes at 4 bytes an element?
bool cores_would_outweigh(const QttLayout& layout, const SvdOptions& opt, int k, int64_t m, int64_t K,
                          int64_t core_elems, int64_t r_here, int64_t abort_core_bytes);

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
