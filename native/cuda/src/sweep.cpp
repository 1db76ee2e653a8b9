// The CUDA backend's TT-SVD sweep, over SweepOps (device kernels or their CPU twins).
//
// Per step (C the m x K unfolding in W): the Gram C C^T is reduced by the ops (float64), its m x m
// eigenproblem solved on the host (LAPACK), and the route chosen exactly as the CPU core chooses it
// (unfolding.cpp): with the threshold >= 1e3 x the Gram's rounding noise the eigenvalues decide
// the rank (a step that keeps full rank then costs no projection at all: the identity core passes C
// on unchanged); with the threshold >= the noise, all m rows are rotated and the rank is chosen from
// their measured energies; tighter than that (the TSQR route), tall unfoldings (m >= K) and
// unfoldings of more than kMaxOpsRows rows, the sweep finishes on the host with the CPU core's own
// factor_unfolding, so the error bound is the CPU backend's in every case.
#include "sweep.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

#include "trace.hpp"
#include "ttstore/internal/dtype_io.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/unfolding.hpp"

namespace tts::cuda::detail {
namespace {

using tts::detail::choose_rank;
using tts::detail::lapack_check;
using tts::detail::partial_trace;
using tts::detail::Route;

constexpr double kMeasuredGram = 1.0;  // unfolding.cpp's constant (same meaning)

struct Eig {
  std::vector<double> sigma;  // descending
  std::vector<double> U;      // m x m row-major: U[j*m + i] = component j of u_i
};

Eig eig_of_gram(std::vector<double> G, int64_t m) {
  std::vector<double> w(static_cast<std::size_t>(m));
  lapack_check(LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', m, G.data(), m, w.data()), "dsyevd");
  Eig out;
  out.sigma.resize(m);
  out.U.resize(static_cast<std::size_t>(m * m));
  for (int64_t i = 0; i < m; ++i) {
    const int64_t src = m - 1 - i;
    out.sigma[i] = std::sqrt(std::max(w[src], 0.0));
    for (int64_t j = 0; j < m; ++j) out.U[j * m + i] = G[j * m + src];
  }
  return out;
}

}  // namespace

std::string non_finite_message(const ArrayView& a, const QttLayout& layout, int64_t bad) {
  std::string kind = "NaN or Inf";
  if (a.data) {
    const double v = tts::detail::dispatch(a.dtype, [&](auto e) {
      return decltype(e)::load(static_cast<const unsigned char*>(a.data) +
                               static_cast<std::size_t>(bad) * dtype_size(a.dtype));
    });
    kind = std::isnan(v) ? "NaN" : (v > 0 ? "Inf" : "-Inf");
  }
  return "array holds a non-finite value (" + kind + ") at flat index " + tts::detail::index_text(layout, bad) +
         "; only finite values can be decomposed";
}

TensorTrain sweep(SweepOps& ops, const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                  int64_t abort_core_bytes, SweepOut& out) {
  tts::detail::check_svd_options(opt);
  const int d = static_cast<int>(layout.modes.size());
  const int64_t N = layout.numel();
  TensorTrain tt;
  tt.modes = layout.modes;
  tt.ranks.assign(1, 1);

  Trace trace("sweep");
  int64_t bad = -1;
  double sumsq = ops.load(&bad);
  trace.mark("load");
  if (bad >= 0) throw InvalidArgument(non_finite_message(a, layout, bad));
  if (sumsq == 0) {
    tt.ranks.assign(d + 1, 1);
    for (int k = 0; k < d; ++k) tt.cores.emplace_back(static_cast<std::size_t>(layout.modes[k]), 0.0);
    out.norm = 0;
    return tt;
  }
  double scale = 1.0;
  if (!(std::isfinite(sumsq) && sumsq > 1e-250 && sumsq < 1e250)) {  // squares over/underflow
    const double maxabs = ops.max_abs(N);
    scale = std::ldexp(1.0, -std::ilogb(maxabs));
    ops.scale(N, scale);
    ops.gram(1, N, &sumsq);
    trace.mark("rescale");
  }
  out.norm = std::sqrt(sumsq) / scale;
  const double delta_sq = tts::detail::step_threshold_sq(opt, d, sumsq);

  int64_t r = 1, P = N, core_elems = 0;
  double disc_sq = 0;
  bool untruncated = true;
  // Whether the cores so far plus the next (full rank, as every step so far kept) outweigh the input.
  auto hopeless = [&](int next) {
    return tts::detail::cores_would_outweigh(layout, opt, core_elems, untruncated, next, r, P, abort_core_bytes);
  };
  auto take = [&](std::vector<double> core, int64_t r_new, const tts::detail::RankChoice& c, int64_t m, int64_t K) {
    disc_sq += c.discarded_sq;
    out.capped = out.capped || c.capped;
    untruncated = untruncated && r_new == std::min(m, K);
    r = r_new;
    P = K;
    tt.ranks.push_back(r);
    core_elems += static_cast<int64_t>(core.size());
    tt.cores.push_back(std::move(core));
  };

  std::vector<double> H;  // the unfolding on the host once the sweep moved there
  bool on_host = false;
  // A Gram taken ahead (kAheadRows): of the unfolding of ahead_m rows, valid while W is unchanged.
  std::vector<double> ahead;
  int64_t ahead_m = 0;
  // The rounding noise of an m-row Gram, and the route it leaves a step of m rows.
  auto noise_of = [&](int64_t m) { return static_cast<double>(m) * DBL_EPSILON * sumsq; };
  auto route_of = [&](int64_t m) {
    const double noise = noise_of(m);
    return delta_sq >= 1e3 * noise             ? Route::Gram
           : delta_sq >= kMeasuredGram * noise ? Route::MeasuredGram
                                               : Route::Tsqr;
  };
  int k = 0;
  for (; k + 1 < d && !out.aborted; ++k) {
    const int64_t n = layout.modes[k], m = r * n, K = P / n;
    if (!on_host && m < K && m <= kMaxOpsRows) {
      const double noise = noise_of(m);
      const Route route = route_of(m);
      std::vector<double> G;
      if (route != Route::Tsqr) {
        if (!(ahead_m >= m && ahead_m % m == 0)) {
          // The deepest unfolding of at most kAheadRows rows whose Gram route this one reaches, were
          // every step up to it to keep full rank.
          int64_t m_big = m, K_big = K;
          for (int j = k + 1; j + 1 < d; ++j) {
            const int64_t n_j = layout.modes[j];
            if (m_big * n_j > kAheadRows || m_big * n_j >= K_big / n_j || route_of(m_big * n_j) == Route::Tsqr) break;
            m_big *= n_j;
            K_big /= n_j;
          }
          ahead.assign(static_cast<std::size_t>(m_big * m_big), 0.0);
          ops.gram(m_big, K_big, ahead.data());
          ahead_m = m_big;
        }
        G = ahead_m == m ? ahead : partial_trace(ahead, ahead_m, m);
      }
      const double gram_ms = trace.mark("gram");
      double project_ms = 0;
      // The TSQR route's tolerances need small singular values to about eps ||C||, which no
      // eigensolver of the m x m Gram gives (a second Gram of the rotated rows was tried: dsyevd's
      // absolute errors of eps ||G|| undo it; test_cuda_sweep showed ranks blowing up at 1e-9).
      if (route != Route::Tsqr) {
        Eig f = eig_of_gram(std::move(G), m);
        trace.mark("eig");
        ++out.device_steps;
        // Even the smallest sigma^2 alone, less the Gram's rounding noise, exceeds the budget: the
        // step keeps full rank on any route, so the identity core passes C on without a projection
        // (the CPU core's full-rank prefix test, applied at every step).
        const double sig_min_sq = f.sigma[m - 1] * f.sigma[m - 1];
        const bool full = (opt.max_rank == 0 || m <= opt.max_rank) && sig_min_sq > delta_sq + 10.0 * noise;
        if (full) {
          std::vector<double> core(static_cast<std::size_t>(m * m), 0.0);
          for (int64_t i = 0; i < m; ++i) core[i * m + i] = 1.0;
          take(std::move(core), m, tts::detail::RankChoice{m, 0.0, false}, m, K);
        } else if (route == Route::Gram) {
          const auto c = choose_rank(f.sigma.data(), m, delta_sq, opt.max_rank);
          if (c.r == m) {  // full rank: identity core, C passes on unchanged
            std::vector<double> core(static_cast<std::size_t>(m * m), 0.0);
            for (int64_t i = 0; i < m; ++i) core[i * m + i] = 1.0;
            take(std::move(core), m, c, m, K);
          } else {
            std::vector<double> core(static_cast<std::size_t>(m * c.r)), Ut(static_cast<std::size_t>(c.r * m));
            for (int64_t j = 0; j < m; ++j) {
              for (int64_t i = 0; i < c.r; ++i) core[j * c.r + i] = Ut[i * m + j] = f.U[j * m + i];
            }
            ops.project(m, K, Ut.data(), c.r, nullptr);
            ahead_m = 0;
            project_ms = trace.mark("project");
            take(std::move(core), c.r, c, m, K);
          }
        } else {  // MeasuredGram: rotate all m rows, choose the rank from their measured energies
          std::vector<double> Ut(static_cast<std::size_t>(m * m)), energy(static_cast<std::size_t>(m));
          for (int64_t j = 0; j < m; ++j) {
            for (int64_t i = 0; i < m; ++i) Ut[i * m + j] = f.U[j * m + i];
          }
          ops.project(m, K, Ut.data(), m, energy.data());
          ahead_m = 0;
          project_ms = trace.mark("project");
          std::vector<double> sig(static_cast<std::size_t>(m));
          for (int64_t i = 0; i < m; ++i) sig[i] = std::sqrt(energy[i]);
          const auto c = choose_rank(sig.data(), m, delta_sq, opt.max_rank);
          std::vector<double> core(static_cast<std::size_t>(m * c.r));
          for (int64_t j = 0; j < m; ++j) {
            for (int64_t i = 0; i < c.r; ++i) core[j * c.r + i] = f.U[j * m + i];
          }
          take(std::move(core), c.r, c, m, K);  // rows 0..r-1 of W are U_r^T C already
        }
        if (trace.on()) {
          char b[96];
          std::snprintf(b, sizeof b, "[%d: %lldx%lld g %.3f p %.3f]", k, static_cast<long long>(m),
                        static_cast<long long>(K), gram_ms, project_ms);
          trace.note(b);
        }
        trace.mark("host");
        if (hopeless(k + 1)) out.aborted = true;
        continue;
      }
    }
    if (!on_host) {  // the rest of the sweep runs on the host
      H.resize(static_cast<std::size_t>(m * K));
      ops.download(m * K, H.data());
      ops.release_work();
      on_host = true;
      trace.mark("download");
    }
    std::function<bool(int64_t)> would_outweigh;
    if (abort_core_bytes > 0 && untruncated) {
      would_outweigh = [&, k, m, K](int64_t r_here) {
        return tts::detail::cores_would_outweigh(layout, opt, core_elems + m * r_here, r_here == std::min(m, K), k + 1,
                                                 r_here, K, abort_core_bytes);
      };
    }
    tts::detail::StepResult s = tts::detail::factor_unfolding(H.data(), m, K, delta_sq, sumsq, opt.max_rank,
                                                              Route::Auto, nullptr, would_outweigh);
    ++out.host_steps;
    trace.mark("host steps");
    if (s.aborted) {
      out.aborted = true;
      break;
    }
    take(std::move(s.core), s.choice.r, s.choice, m, K);
    if (hopeless(k + 1)) out.aborted = true;
  }
  if (!out.aborted) {
    std::vector<double> last(static_cast<std::size_t>(r * P));
    if (on_host) {
      std::copy(H.begin(), H.begin() + r * P, last.begin());
    } else {
      ops.download(r * P, last.data());
      trace.mark("download");
    }
    tt.cores.push_back(std::move(last));
    tt.ranks.push_back(1);
  }
  if (!on_host) ops.release_work();
  if (scale != 1.0 && !tt.cores.empty()) {
    for (double& v : tt.cores.back()) v /= scale;
  }
  out.discarded_sq = disc_sq / (scale * scale);
  return tt;
}

CompressResult compress_with(SweepOps& ops, const ArrayView& a, const QttLayout& layout, const SvdOptions& opt) {
  tts::detail::check_svd_options(opt);
  const int64_t original_bytes = a.numel * static_cast<int64_t>(dtype_size(a.dtype));
  // The policy of native/core/src/tt/compress.cpp (float32 cores when they meet tol, measured; retries
  // at tol/10), over this sweep and the ops' fingerprints.
  return tts::detail::choose_cores(
      opt, original_bytes,
      [&](const SvdOptions& o, int) {
        SweepOut run;
        tts::detail::SweepAttempt s;
        s.tt = sweep(ops, a, layout, o, original_bytes, run);
        s.aborted = run.aborted;
        s.capped = run.capped;
        s.norm = run.norm;
        return s;
      },
      [&](const TensorTrain& tt) { return ops.fingerprint(tt); });
}

}  // namespace tts::cuda::detail
