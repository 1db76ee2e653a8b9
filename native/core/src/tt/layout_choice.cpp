// compress_best_layout(): the layout an entry is stored in (CONTRACT.md section 3), the one whose
// cores take fewer bytes at the target. A probe on a coarse sample decides when one layout clearly
// wins (a front across the axes, a smooth field); close calls sweep both layouts in full.
#include <algorithm>
#include <limits>

#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/tt.hpp"

namespace tts {
namespace {

// Below this many elements both full sweeps cost less than a probe is worth.
constexpr int64_t kProbeMinElements = int64_t{1} << 16;
// The probe's sample holds at most this fraction of the array (every 8th element along each axis of
// a 2-D array, every 4th of a 3-D one), so it adds a few percent of a sweep.
constexpr int64_t kProbeShrink = 64;
// The probe's winner is taken only when it stores this many times fewer bytes on the coarse
// sample; closer calls can flip at full resolution, so both are swept.
constexpr double kClearMargin = 1.5;

struct Outcome {
  bool meets = false;  // the measured error is within the target
  int64_t bytes = 0;   // stored bytes: the cores', or the input's when not compressible
};

Outcome outcome(const CompressResult& r, const SvdOptions& opt, int64_t original_bytes) {
  Outcome o;
  o.bytes = r.compressible ? r.tt.stored_bytes() : original_bytes;
  o.meets =
      r.compressible && (opt.tol > 0 ? r.fingerprint.relative_error <= opt.tol : r.fingerprint.frobenius_error == 0);
  return o;
}

// a better than b: meets the target where b does not, else fewer bytes (ties keep b).
bool better(const Outcome& a, const Outcome& b) {
  if (a.meets != b.meets) return a.meets;
  return a.bytes < b.bytes;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Every 2^c-th element along each axis (c the same for all axes, or the axis' bits when fewer, the
// smallest c that shrinks the array kProbeShrink times or more), as float64 in C order;
// `coarse_shape` receives its shape.
std::vector<double> coarse_sample(const ArrayView& a, const std::vector<int64_t>& shape,
                                  std::vector<int64_t>& coarse_shape) {
  const int na = static_cast<int>(shape.size());
  std::vector<int64_t> step(na, 1), cstride(na, 1);
  for (int j = na - 2; j >= 0; --j) cstride[j] = cstride[j + 1] * shape[j + 1];
  coarse_shape = shape;
  for (bool shrunk = true; shrunk && product(coarse_shape) * kProbeShrink > a.numel;) {
    shrunk = false;
    for (int j = 0; j < na; ++j) {
      if (coarse_shape[j] % 2 == 0) {
        coarse_shape[j] /= 2;
        step[j] *= 2;
        shrunk = true;
      }
    }
  }
  const int64_t n = product(coarse_shape);
  std::vector<double> out(static_cast<std::size_t>(n));
  const std::size_t size = dtype_size(a.dtype);
  const auto* base = static_cast<const unsigned char*>(a.data);
  std::vector<int64_t> idx(na, 0);
  for (int64_t t = 0; t < n; ++t) {
    int64_t off = 0;
    for (int j = 0; j < na; ++j) off += idx[j] * step[j] * cstride[j];
    widen(base + off * static_cast<int64_t>(size), a.dtype, 1, &out[static_cast<std::size_t>(t)]);
    for (int j = na - 1; j >= 0; --j) {
      if (++idx[j] < coarse_shape[j]) break;
      idx[j] = 0;
    }
  }
  return out;
}

bool same_order(const QttLayout& x, const QttLayout& y) { return x.modes == y.modes && x.weights == y.weights; }

}  // namespace

LayoutChosen compress_best_layout(const ArrayView& a, const std::vector<int64_t>& shape, const SvdOptions& opt,
                                  const CompressOptions& more, const CompressInFn& compress_in) {
  detail::check_svd_options(opt);
  LayoutChosen out;
  out.layout = make_layout(shape, LayoutKind::RowMajor);
  QttLayout il = make_layout(shape, LayoutKind::Interleaved);
  if (same_order(out.layout, il)) {
    out.result = compress_in(out.layout, more);
    return out;
  }
  const int64_t original_bytes = a.numel * static_cast<int64_t>(dtype_size(a.dtype));
  // The interleaved sweep gathers for itself: `gathered` is in C order, row_major's mode order.
  CompressOptions il_more;
  il_more.progress = more.progress;
  // Sweeping both, each reports half of the progress.
  CompressOptions rm_half = more, il_half;
  if (more.progress) {
    rm_half.progress = [&more](double f) { more.progress(0.5 * f); };
    il_half.progress = [&more](double f) { more.progress(0.5 + 0.5 * f); };
  }

  if (a.numel >= kProbeMinElements) {
    std::vector<int64_t> cshape;
    const std::vector<double> coarse = coarse_sample(a, shape, cshape);
    const QttLayout crm = make_layout(cshape, LayoutKind::RowMajor);
    const QttLayout cil = make_layout(cshape, LayoutKind::Interleaved);
    if (!same_order(crm, cil)) {
      // The decomposition alone: float32 cores and measured errors would move both layouts alike.
      // Each stops once it is clearly the worse (the other's values times the margin, or the
      // sample's own size), so a probe never pays for the losing layout's high ranks.
      const ArrayView cv{coarse.data(), DType::F64, static_cast<int64_t>(coarse.size())};
      const auto probe = [&](const QttLayout& l, double stop_elements) {
        detail::SvdRun run;
        run.abort_core_bytes = std::max<int64_t>(1, static_cast<int64_t>(4 * stop_elements));
        const TensorTrain t = detail::qtt_svd_run(cv, l, opt, {}, run);
        return run.aborted ? std::numeric_limits<double>::infinity() : static_cast<double>(t.core_elements());
      };
      const double sample = static_cast<double>(cv.numel);
      // A probe stopped at the sample's size counts as that size: as large as the data, no more.
      const double orm = std::min(sample, probe(crm, sample));
      const double oil = std::min(sample, probe(cil, std::min(sample, kClearMargin * orm)));
      out.probed = true;
      if (oil * kClearMargin <= orm) {
        out.layout = std::move(il);
        out.result = compress_in(out.layout, il_more);
        return out;
      }
      if (orm * kClearMargin <= oil) {
        out.result = compress_in(out.layout, more);
        return out;
      }
    }
  }
  out.swept_both = true;
  out.result = compress_in(out.layout, rm_half);
  CompressResult ril = compress_in(il, il_half);
  if (better(outcome(ril, opt, original_bytes), outcome(out.result, opt, original_bytes))) {
    out.layout = std::move(il);
    out.result = std::move(ril);
  }
  return out;
}

}  // namespace tts
