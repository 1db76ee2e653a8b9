// MPO x MPS by variational fitting (two-site sweeps, as in DMRG): y minimises ||A x - y|| over
// trains whose other cores are orthonormal, so each two-site block is the exact projection of A x
// onto the frame the rest of y spans and its SVD truncation is optimal for the error it discards.
//
// The zip-up (zip_up.cpp) splits a remainder whose right factor, the rest of A applied to the rest of
// x, is not orthonormal, so its singular values misstate what a truncation costs and a capped split
// can keep the wrong directions (measured: Hadamard products in navier_stokes_2d at 128² carry
// 140-190 for results of rank 22-42). Here every truncation sees the true error of A x itself. The
// sweeps use the same sparse core contraction as the zip-up, at the result's rank.
#include <cmath>
#include <string>

#include "qtt/operator_core.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

namespace {

struct Fit {
  const Mpo& a;
  const Mps& x;
  Mps& y;
  // env_l[k][r, w, s]: cores < k of y, A, x contracted; env_r[k]: cores >= k.
  std::vector<std::vector<double>> env_l, env_r;
  // A's cores with their bonds swapped, W'[w1, i, j, w] = W[w, i, j, w1], made when first needed.
  std::vector<std::vector<double>> swapped_;

  const std::vector<double>& swapped(int k) {
    std::vector<double>& t = swapped_[static_cast<std::size_t>(k)];
    if (t.empty()) {
      const int64_t R0 = a.ranks[k], n = a.modes[k], R1 = a.ranks[k + 1];
      const std::vector<double>& W = a.cores[k];
      t.resize(W.size());
      for (int64_t w = 0; w < R0; ++w) {
        for (int64_t ij = 0; ij < n * n; ++ij) {
          for (int64_t w1 = 0; w1 < R1; ++w1) t[(w1 * n * n + ij) * R0 + w] = W[(w * n * n + ij) * R1 + w1];
        }
      }
    }
    return t;
  }

  // T2[a, i, w1, s1] = sum L_k[a, w, s] X_k[s, j, s1] W_k[w, i, j, w1]
  void left_half(int k, std::vector<double>& T2) const {
    const int64_t r0 = y.ranks[k], R0 = a.ranks[k], s0 = x.ranks[k], n = x.modes[k];
    const int64_t R1 = a.ranks[k + 1], s1 = x.ranks[k + 1];
    std::vector<double> T1(static_cast<std::size_t>(r0 * R0 * n * s1));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r0 * R0, n * s1, s0, 1.0, env_l[k].data(), s0,
                x.cores[k].data(), n * s1, 0.0, T1.data(), n * s1);
    detail::poll_point();
    detail::apply_operator_core(r0, R0, n, R1, s1, T1, a.cores[k], T2);
  }

  // L_{k+1}[b, w1, s1] = sum_{a, i} Y_k[a, i, b] T2[a, i, w1, s1]
  void push_left(int k, const std::vector<double>& T2) {
    const int64_t r0 = y.ranks[k], n = y.modes[k], r1 = y.ranks[k + 1];
    const int64_t q = a.ranks[k + 1] * x.ranks[k + 1];
    env_l[k + 1].assign(static_cast<std::size_t>(r1 * q), 0.0);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r1, q, r0 * n, 1.0, y.cores[k].data(), r1, T2.data(), q, 0.0,
                env_l[k + 1].data(), q);
  }

  // R_k[a, w, s] = sum Y_k[a, i, b] W_k[w, i, j, w1] X_k[s, j, s1] R_{k+1}[b, w1, s1]
  void push_right(int k) {
    const int64_t r0 = y.ranks[k], n = y.modes[k], r1 = y.ranks[k + 1];
    const int64_t R0 = a.ranks[k], R1 = a.ranks[k + 1], s0 = x.ranks[k], s1 = x.ranks[k + 1];
    // P[b, w1, s, j] = sum_{s1} R_{k+1}[b, w1, s1] X_k[s, j, s1]
    std::vector<double> P(static_cast<std::size_t>(r1 * R1 * s0 * n));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r1 * R1, s0 * n, s1, 1.0, env_r[k + 1].data(), s1,
                x.cores[k].data(), s1, 0.0, P.data(), s0 * n);
    // Pt[b, w1, j, s]
    std::vector<double> Pt(P.size());
    for (int64_t bw = 0; bw < r1 * R1; ++bw) {
      for (int64_t s = 0; s < s0; ++s) {
        for (int64_t j = 0; j < n; ++j) Pt[(bw * n + j) * s0 + s] = P[(bw * s0 + s) * n + j];
      }
    }
    // Qb[b, i, w, s] = sum_{j, w1} Pt[b, w1, j, s] W[w, i, j, w1]: the core with its bonds swapped
    std::vector<double> Qb;
    detail::poll_point();
    detail::apply_operator_core(r1, R1, n, R0, s0, Pt, swapped(k), Qb);
    detail::poll_point();
    // R_k[a, (w, s)] = sum_{b, i} Yt[a, (b, i)] Qb[(b, i), (w, s)], Yt the core with (i, b) swapped:
    // transposing the core costs r0 n r1 moves where reordering Qb would cost n r1 R0 s0.
    std::vector<double> Yt(y.cores[k].size());
    for (int64_t a0 = 0; a0 < r0; ++a0) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t b = 0; b < r1; ++b) Yt[(a0 * r1 + b) * n + i] = y.cores[k][(a0 * n + i) * r1 + b];
      }
    }
    env_r[k].assign(static_cast<std::size_t>(r0 * R0 * s0), 0.0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r0, R0 * s0, n * r1, 1.0, Yt.data(), n * r1, Qb.data(),
                R0 * s0, 0.0, env_r[k].data(), R0 * s0);
  }

  // theta[a, i1, i2, b]: the projection of A x on the frame of y's cores other than k and k + 1.
  void block(int k, const std::vector<double>& T2, std::vector<double>& theta) const {
    // At ranks 128 each of the three products below is a fraction of a second, a poll before each.
    const int64_t r0 = y.ranks[k], n1 = x.modes[k], n2 = x.modes[k + 1], r2 = y.ranks[k + 2];
    const int64_t R1 = a.ranks[k + 1], R2 = a.ranks[k + 2];
    const int64_t s1 = x.ranks[k + 1], s2 = x.ranks[k + 2];
    // T3[(a, i1), w1, j2, s2] = T2[(a, i1, w1), s1] X_{k+1}[s1, (j2, s2)]
    std::vector<double> T3(static_cast<std::size_t>(r0 * n1 * R1 * n2 * s2)), T4;
    detail::poll_point();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r0 * n1 * R1, n2 * s2, s1, 1.0, T2.data(), s1,
                x.cores[k + 1].data(), n2 * s2, 0.0, T3.data(), n2 * s2);
    detail::poll_point();
    detail::apply_operator_core(r0 * n1, R1, n2, R2, s2, T3, a.cores[k + 1], T4);  // T4[(a, i1), i2, w2, s2]
    detail::poll_point();
    theta.assign(static_cast<std::size_t>(r0 * n1 * n2 * r2), 0.0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, r0 * n1 * n2, r2, R2 * s2, 1.0, T4.data(), R2 * s2,
                env_r[k + 2].data(), R2 * s2, 0.0, theta.data(), r2);
  }
};

double frob(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  return std::sqrt(s);
}

}  // namespace

Mps apply_fit(const Mpo& a, const Mps& xin, const Mps& guess, const SvdOptions& opt, int sweeps) {
  a.validate();
  xin.validate();
  guess.validate();
  if (a.modes != xin.modes || guess.modes != xin.modes) {
    throw InvalidArgument("apply_fit: operator, vector and guess have different modes");
  }
  const int d = xin.d();
  if (d < 2) return apply(a, xin, opt);
  Mps x = xin, y = guess;
  y.f32 = false;
  orthogonalize_left(y);
  Fit f{a, x, y, {}, {}, {}};
  f.swapped_.resize(static_cast<std::size_t>(d));
  f.env_l.resize(static_cast<std::size_t>(d + 1));
  f.env_r.resize(static_cast<std::size_t>(d + 1));
  f.env_l[0] = {1.0};
  f.env_r[d] = {1.0};
  std::vector<double> T2, theta, U, s, Vt;
  for (int k = 0; k + 2 < d; ++k) {
    detail::poll_point();
    f.left_half(k, T2);
    f.push_left(k, T2);
  }
  const double root = std::sqrt(static_cast<double>(d - 1));
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    const bool leftward = sweep % 2 == 0;
    for (int step = 0; step + 1 < d; ++step) {
      const int k = leftward ? d - 2 - step : step;
      // A pair at ranks 128 is GEMMs and an SVD of seconds on a loaded host: a poll between each.
      detail::poll_point();
      f.left_half(k, T2);
      f.block(k, T2, theta);
      detail::poll_point();
      const int64_t r0 = y.ranks[k], n1 = y.modes[k], n2 = y.modes[k + 1], r2 = y.ranks[k + 2];
      detail::svd_rows(r0 * n1, n2 * r2, theta.data(), U, s, Vt);
      const int64_t kk = static_cast<int64_t>(s.size());
      const double delta = opt.tol * frob(theta) / root;
      const int64_t r = detail::choose_rank(s.data(), kk, delta * delta, opt.max_rank).r;
      std::vector<double> left(static_cast<std::size_t>(r0 * n1 * r)), right(static_cast<std::size_t>(r * n2 * r2));
      for (int64_t i = 0; i < r0 * n1; ++i) {
        for (int64_t j = 0; j < r; ++j) left[i * r + j] = U[i * kk + j] * (leftward ? s[j] : 1.0);
      }
      for (int64_t j = 0; j < r; ++j) {
        for (int64_t c = 0; c < n2 * r2; ++c) right[j * n2 * r2 + c] = Vt[j * n2 * r2 + c] * (leftward ? 1.0 : s[j]);
      }
      y.cores[k] = std::move(left);
      y.cores[k + 1] = std::move(right);
      y.ranks[k + 1] = r;
      detail::poll_point();
      if (leftward) {
        f.push_right(k + 1);
      } else if (k + 2 < d) {
        f.push_left(k, T2);
      }
    }
  }
  return y;
}

}  // namespace tts::qtt
