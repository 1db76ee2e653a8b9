// compress(): TT-SVD, then the storage precision (float32 or float64 cores) chosen by a measured
// fingerprint. Every fingerprint returned here comes from a real reconstruction. choose_cores() is
// that policy for every backend (the CUDA sweep calls it too).
#include <cfloat>
#include <cmath>

#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/tt.hpp"

namespace tts {
namespace {

// float32 rounding moves each core value by up to 2^-24 relative; through d (mostly orthogonal)
// cores the reconstruction moves by about sqrt(d) of that. Try float32 cores only when that
// estimate leaves most of the budget to the decomposition.
bool f32_worth_trying(double tol, int d) {
  if (tol == 0) return true;  // lossless: float32 may still round back exactly (integers)
  return 4.0 * std::ldexp(1.0, -24) * std::sqrt(static_cast<double>(d)) <= 0.5 * tol;
}

bool better(const Fingerprint& a, const Fingerprint& b) {  // a strictly more accurate than b
  return a.frobenius_error < b.frobenius_error;
}

}  // namespace

namespace detail {

CompressResult choose_cores(const SvdOptions& opt, int64_t original_bytes,
                            const std::function<SweepAttempt(const SvdOptions&, int)>& sweep,
                            const std::function<Fingerprint(const TensorTrain&)>& measure) {
  auto meets = [&](const Fingerprint& fp) {
    return opt.tol > 0 ? fp.relative_error <= opt.tol : fp.frobenius_error == 0;
  };
  CompressResult res;
  SvdOptions o = opt;
  for (int attempt = 0; attempt < 3; ++attempt) {
    SweepAttempt run = sweep(o, attempt);
    if (run.aborted) {
      // The cores already outgrow the input: nothing is kept, the caller stores the input itself.
      CompressResult none;
      none.compressible = false;
      none.fingerprint.reference_norm = run.norm;
      return none;
    }
    TensorTrain tt = std::move(run.tt);
    Fingerprint fp;
    if (f32_worth_trying(opt.tol, tt.d())) {
      TensorTrain t32 = to_f32(tt);
      const Fingerprint f32fp = measure(t32);
      if (meets(f32fp)) {
        fp = f32fp;
        tt = std::move(t32);
      } else {
        const Fingerprint f64fp = measure(tt);
        if (opt.tol == 0 && !better(f64fp, f32fp)) {
          fp = f32fp;
          tt = std::move(t32);
        } else {
          fp = f64fp;
        }
      }
    } else {
      fp = measure(tt);
    }
    res.tt = std::move(tt);
    res.fingerprint = fp;
    res.compressible = res.tt.stored_bytes() < original_bytes;
    // Retry only when tightening can help: tol is the binding constraint, not the rank cap.
    if (meets(fp) || run.capped || opt.tol == 0 || !res.compressible) break;
    o.tol = o.tol * 0.1;
  }
  return res;
}

}  // namespace detail

CompressResult compress(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                        const CompressOptions& more) {
  const ProgressFn& progress = more.progress;
  detail::check_svd_options(opt);
  detail::check_array(a, layout, "array");
  const int64_t original_bytes = a.numel * static_cast<int64_t>(dtype_size(a.dtype));
  CompressResult res = detail::choose_cores(
      opt, original_bytes,
      [&](const SvdOptions& o, int attempt) {
        detail::SvdRun run;
        run.abort_core_bytes = original_bytes;
        run.pregathered = attempt == 0 ? more.gathered : nullptr;  // the first sweep consumes it
        run.pregathered_sum_squares = more.gathered_sum_squares;
        ProgressFn step_progress;
        if (progress) {
          step_progress = [&progress, attempt](double f) { progress(0.9 * (attempt + f) / (attempt + 1)); };
        }
        detail::SweepAttempt s;
        s.tt = detail::qtt_svd_run(a, layout, o, step_progress, run);
        s.aborted = run.aborted;
        s.capped = run.capped;
        s.norm = run.norm;
        return s;
      },
      [&](const TensorTrain& tt) { return fingerprint(tt, layout, a); });
  if (progress) progress(1.0);
  return res;
}

}  // namespace tts
