// TT-SVD over a QTT layout (left to right) with one float64 working buffer.
//
// The working buffer W holds the current unfolding C (m x K, row-major) in its first m*K entries.
// Each step finds the left singular vectors of C without an SVD of the wide matrix (Gram/eigen or a
// streaming TSQR of C^T, then an SVD of an m x m matrix), keeps U_r as the core and overwrites W
// with U_r^T C chunk by chunk. Threading: OpenBLAS (pthread build) contends badly when called from
// several OpenMP threads at once, so BLAS/LAPACK run from OpenMP threads only on blocks small
// enough that OpenBLAS keeps them single-threaded; big blocks go to one threaded BLAS call.
#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "ttstore/internal/dtype_io.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/threads.hpp"
#include "ttstore/internal/unfolding.hpp"

namespace tts {
namespace detail {

void check_svd_options(const SvdOptions& opt) {
  if (!(opt.tol >= 0.0 && opt.tol < 1.0)) {
    throw InvalidArgument("tol must be in [0, 1), got " + std::to_string(opt.tol));
  }
  if (opt.max_rank < 0) {
    throw InvalidArgument("max_rank must be >= 0 (0: no cap), got " + std::to_string(opt.max_rank));
  }
}

void check_array(const ArrayView& a, const QttLayout& layout, const char* what) {
  if (layout.modes.empty() || layout.modes.size() != layout.weights.size()) {
    throw InvalidArgument("layout has no modes (build it with make_layout)");
  }
  if (a.numel <= 0) {
    throw InvalidArgument(std::string(what) + " is empty (numel " + std::to_string(a.numel) + ")");
  }
  if (a.numel != layout.numel()) {
    throw InvalidArgument(std::string(what) + " has " + std::to_string(a.numel) +
                          " elements but the layout's shape holds " + std::to_string(layout.numel()));
  }
  if (a.data == nullptr) throw InvalidArgument(std::string(what) + " has no data");
  dtype_size(a.dtype);  // throws on an unknown dtype code
}

std::string index_text(const QttLayout& layout, int64_t flat) {
  std::string s = std::to_string(flat) + " (index [";
  std::vector<int64_t> idx(layout.shape.size());
  int64_t rest = flat;
  for (int j = static_cast<int>(layout.shape.size()) - 1; j >= 0; --j) {
    idx[j] = rest % layout.shape[j];
    rest /= layout.shape[j];
  }
  for (std::size_t j = 0; j < idx.size(); ++j) s += (j ? ", " : "") + std::to_string(idx[j]);
  return s + "])";
}

// W[t] = A[offset(t)] as float64 in mode order; returns sum of squares. Throws on NaN/Inf,
// naming the first bad element in C order.
double gather(const ArrayView& a, const QttLayout& layout, double* W) {
  const OffsetTables T = offsets_split(layout);
  const unsigned char* src = static_cast<const unsigned char*>(a.data);
  const std::size_t sz = dtype_size(a.dtype);
  const int64_t n_hi = T.n_hi, n_lo = T.n_lo;
  const int64_t* hi = T.hi.data();
  const int64_t* lo = T.lo.data();
  double sumsq = 0;
  int64_t bad = std::numeric_limits<int64_t>::max();
  dispatch(a.dtype, [&](auto e) {
    using E = decltype(e);
#pragma omp parallel for num_threads(detail::threads()) schedule(static) reduction(+ : sumsq) reduction(min : bad)
    for (int64_t h = 0; h < n_hi; ++h) {
      const int64_t base = hi[h];
      double* dst = W + h * n_lo;
      double s = 0;
      for (int64_t j = 0; j < n_lo; ++j) {
        const double v = E::load(src + static_cast<std::size_t>(base + lo[j]) * sz);
        dst[j] = v;
        s += v * v;
      }
      if (!std::isfinite(s)) {
        for (int64_t j = 0; j < n_lo; ++j) {
          if (!std::isfinite(dst[j])) bad = std::min(bad, base + lo[j]);
        }
      }
      sumsq += s;
    }
    return 0;
  });
  if (bad != std::numeric_limits<int64_t>::max()) {
    const double v =
        dispatch(a.dtype, [&](auto e) { return decltype(e)::load(src + static_cast<std::size_t>(bad) * sz); });
    throw InvalidArgument(std::string("array holds a non-finite value (") +
                          (std::isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf")) + ") at flat index " +
                          index_text(layout, bad) + "; only finite values can be decomposed");
  }
  return sumsq;
}

namespace {

double sum_of_squares(const double* W, int64_t n) {
  double s = 0;
#pragma omp parallel for num_threads(detail::threads()) schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += W[i] * W[i];
  return s;
}

// Scales W by a power of two (exact) when squares would overflow or underflow; returns the factor.
double rescale(double* W, int64_t n, double& sumsq) {
  if (std::isfinite(sumsq) && sumsq > 1e-250 && sumsq < 1e250) return 1.0;
  double maxabs = 0;
#pragma omp parallel for num_threads(detail::threads()) schedule(static) reduction(max : maxabs)
  for (int64_t i = 0; i < n; ++i) maxabs = std::max(maxabs, std::fabs(W[i]));
  if (maxabs == 0) return 1.0;
  const double f = std::ldexp(1.0, -std::ilogb(maxabs));
  double s = 0;
#pragma omp parallel for num_threads(detail::threads()) schedule(static) reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    W[i] *= f;
    s += W[i] * W[i];
  }
  sumsq = s;
  return f;
}

// Leading steps whose unfolding keeps full rank change nothing in TT-SVD: the core is then a basis
// of the whole row space and C passes on unrotated (any basis gives the same train). One Gram
// matrix of a wider leading unfolding (rows n_1..n_p, up to 256) decides all of them at once: the
// Gram of a shorter unfolding j is a partial trace of it, and since nothing has been rotated yet
// it is exactly the Gram the first real step needs, so that step reuses it.
struct Prefix {
  int steps = 0;             // leading steps that keep full rank
  std::vector<double> gram;  // C C^T of the unfolding at step `steps` (full symmetric)
};

Prefix full_rank_prefix(const double* W, const std::vector<int64_t>& modes, int64_t N, double delta_sq, double norm_sq,
                        int64_t max_rank) {
  Prefix pre;
  const int d = static_cast<int>(modes.size());
  if (N < (int64_t{1} << 16)) return pre;
  int64_t limit = 16;  // rows of the first probe (memory-bound size); later probes grow 4x
  while (true) {
    // Probe the unfolding with rows n_1..n_p (p the last mode that fits).
    const int j0 = pre.steps;
    int64_t Mp = 1;
    int p = -1;
    for (int k = 0; k + 1 < d; ++k) {
      const int64_t next = Mp * modes[k];
      if (next > limit || next * next > N) break;
      Mp = next;
      p = k;
    }
    if (p < j0) return pre;
    std::vector<double> G = gram(W, Mp, N / Mp);
    for (int64_t a = 0; a < Mp; ++a) {
      for (int64_t b = 0; b < a; ++b) G[a * Mp + b] = G[b * Mp + a];
    }
    const double noise = 10.0 * static_cast<double>(Mp) * DBL_EPSILON * norm_sq;
    int64_t Mj = 1;
    for (int k = 0; k < j0; ++k) Mj *= modes[k];
    for (int j = j0; j <= p; ++j) {
      Mj *= modes[j];
      std::vector<double> Gj = partial_trace(G, Mp, Mj);
      bool full = (max_rank == 0 || Mj <= max_rank);
      if (full) {
        std::vector<double> H = Gj, w(static_cast<std::size_t>(Mj));
        lapack_check(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'U', Mj, H.data(), Mj, w.data()), "dsyevd");
        full = w[0] > delta_sq + noise;  // even the smallest sigma^2 alone exceeds the budget
      }
      if (!full) {
        pre.gram.swap(Gj);  // step j is the first real step; this is its Gram
        return pre;
      }
      pre.steps = j + 1;
    }
    // Every probed step keeps full rank: probe a wider unfolding.
    if (limit >= 256) return pre;
    limit *= 4;
  }
}

}  // namespace

double step_threshold_sq(const SvdOptions& opt, int d, double sumsq) {
  const double norm_s = std::sqrt(sumsq);
  const double delta = opt.tol > 0 ? opt.tol * norm_s / std::sqrt(std::max(1, d - 1)) : 16 * DBL_EPSILON * norm_s;
  return delta * delta;
}

bool cores_would_outweigh(const QttLayout& layout, const SvdOptions& opt, int64_t core_elems, bool untruncated,
                          int next, int64_t r, int64_t P, int64_t abort_core_bytes) {
  if (abort_core_bytes <= 0) return false;
  const int d = static_cast<int>(layout.modes.size());
  int64_t bound = core_elems;
  if (untruncated && next < d) {
    const int64_t m2 = r * layout.modes[next], K2 = P / layout.modes[next];
    int64_t r2 = std::min(m2, K2);
    if (opt.max_rank > 0) r2 = std::min(r2, opt.max_rank);
    bound += next + 1 < d ? m2 * r2 : m2;
  }
  return bound * 4 >= abort_core_bytes;
}

TensorTrain qtt_svd_run(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt, const ProgressFn& progress,
                        SvdRun& run) {
  check_svd_options(opt);
  check_array(a, layout, "array");
  const int d = static_cast<int>(layout.modes.size());
  const int64_t N = a.numel;

  TensorTrain tt;
  tt.modes = layout.modes;
  tt.ranks.assign(1, 1);
  tt.f32 = false;

  DoubleBuffer owned;
  double* W = run.pregathered;
  double sumsq;
  if (W != nullptr) {
    sumsq = std::isfinite(run.pregathered_sum_squares) ? run.pregathered_sum_squares : sum_of_squares(W, N);
    // NaN/Inf (or squares past the float64 range): gather again, which names a bad element or
    // leaves the same values for rescale().
    if (!std::isfinite(sumsq)) sumsq = gather(a, layout, W);
  } else {
    owned = DoubleBuffer(N);
    W = owned.data();
    sumsq = gather(a, layout, W);
  }
  if (sumsq == 0) {  // all zeros: rank 1 everywhere, zero cores
    tt.ranks.assign(d + 1, 1);
    for (int k = 0; k < d; ++k) tt.cores.emplace_back(static_cast<std::size_t>(layout.modes[k]), 0.0);
    run.norm = 0;
    if (progress) progress(1.0);
    return tt;
  }
  const double scale = rescale(W, N, sumsq);
  run.norm = std::sqrt(sumsq) / scale;

  const double delta_sq = step_threshold_sq(opt, d, sumsq);

  int64_t r = 1, P = N, core_elems = 0;
  double disc_sq = 0;
  Prefix pre;
  if (run.force_route == Route::Auto) {
    pre = full_rank_prefix(W, layout.modes, N, delta_sq, sumsq, opt.max_rank);
  }
  for (int k = 0; k < pre.steps; ++k) {  // identity cores: C passes on unchanged
    const int64_t n = layout.modes[k], m = r * n;
    std::vector<double> core(static_cast<std::size_t>(m * m), 0.0);
    for (int64_t i = 0; i < m; ++i) core[i * m + i] = 1.0;
    tt.cores.push_back(std::move(core));
    tt.ranks.push_back(m);
    core_elems += m * m;
    r = m;
    P /= n;
    run.routes.push_back(Route::Identity);
  }
  // Early stop for compress(): the cores so far, plus the next core if the next step keeps full rank
  // as every step so far did (noise-like data), already outweigh the input.
  bool untruncated = true;
  auto hopeless = [&](int next) {
    return cores_would_outweigh(layout, opt, core_elems, untruncated, next, r, P, run.abort_core_bytes);
  };
  if (pre.steps > 0 && hopeless(pre.steps)) run.aborted = true;
  for (int k = pre.steps; k + 1 < d && !run.aborted; ++k) {
    const int64_t n = layout.modes[k], m = r * n, K = P / n;
    std::vector<double>* known = (k == pre.steps && !pre.gram.empty()) ? &pre.gram : nullptr;
    // Before any vectors of a large step: would keeping rank r here (and full rank next, as every
    // step so far did) already outweigh the input?
    std::function<bool(int64_t)> would_outweigh;
    if (run.abort_core_bytes > 0 && untruncated) {
      would_outweigh = [&, k, m, K](int64_t r_here) {
        return cores_would_outweigh(layout, opt, core_elems + m * r_here, r_here == std::min(m, K), k + 1, r_here, K,
                                    run.abort_core_bytes);
      };
    }
    StepResult s = factor_unfolding(W, m, K, delta_sq, sumsq, opt.max_rank, run.force_route, known, would_outweigh);
    if (s.aborted) {
      run.aborted = true;
      break;
    }
    disc_sq += s.choice.discarded_sq;
    run.capped = run.capped || s.choice.capped;
    run.routes.push_back(s.route);
    untruncated = untruncated && s.choice.r == std::min(m, K);
    r = s.choice.r;
    P = K;
    tt.ranks.push_back(r);
    core_elems += static_cast<int64_t>(s.core.size());
    tt.cores.push_back(std::move(s.core));
    if (hopeless(k + 1)) {
      run.aborted = true;
      break;
    }
    if (progress) progress(static_cast<double>(k + 1) / d);
  }
  if (!run.aborted) {
    tt.cores.emplace_back(W, W + r * P);  // last core: r x n_d
    tt.ranks.push_back(1);
  }
  owned = DoubleBuffer();
  if (scale != 1.0 && !tt.cores.empty()) {
    for (double& v : tt.cores.back()) v /= scale;
  }
  run.discarded_sq = disc_sq / (scale * scale);
  if (progress) progress(1.0);
  return tt;
}

}  // namespace detail

TensorTrain qtt_svd(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt, const ProgressFn& progress) {
  detail::SvdRun run;
  return detail::qtt_svd_run(a, layout, opt, progress, run);
}

}  // namespace tts
