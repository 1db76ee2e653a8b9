// MPO x MPS by the zip-up algorithm (Stoudenmire and White 2010), and the Hadamard product as the
// same contraction with diag(y) for the operator.
//
// Multiplying first and rounding after would build cores of rank rank(A) * rank(x) across the whole
// train (and SVD them); zip-up instead carries one remainder C[r, w, s] (result bond, operator bond,
// MPS bond) left to right, and at each core contracts C with the operator and MPS cores and splits
// off a truncated left factor. With x right-orthogonal the discarded weight at each split is close
// to the true error, and a final rounding sweep makes the truncation optimal for the kept ranks.
//
// The carried rank is capped (at 1.5 max_rank) to bound the cost, but the remainder's right factor
// (the rest of A applied to the rest of x) is not orthonormal, so the carried rank a split needs can
// be several times the result's: a Hadamard product of rank-64 fields whose result has rank ~40
// carries ~190 at tol. A capped split then keeps the wrong directions, and in navier_stokes_2d that
// error fed back into the state until its ranks hit the cap (issue #7). When a split was capped, the
// result is corrected by one sweep of apply_fit (mpo_fit.cpp), whose truncations are exact.
#include <cmath>
#include <string>

#include "qtt/operator_core.hpp"
#include "ttstore/internal/linalg.hpp"
#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/qtt_algebra.hpp"

namespace tts::qtt {

Mps apply(const Mpo& a, const Mps& xin, const SvdOptions& opt) {
  a.validate();
  xin.validate();
  if (a.modes != xin.modes) throw InvalidArgument("apply: operator and vector have different modes");
  Mps x = xin;
  orthogonalize_right(x);
  const int d = x.d();

  // Looser than the final rounding, so that the final sweep (not the heuristic split) decides.
  const double tol_zip = opt.tol / 4;
  const int64_t cap_zip = opt.max_rank > 0 ? opt.max_rank + opt.max_rank / 2 : 0;

  bool capped = false;
  Mps y;
  y.modes = x.modes;
  y.ranks.assign(static_cast<std::size_t>(d + 1), 1);
  std::vector<double> C{1.0}, T1, T2, U, s;
  int64_t rc = 1;
  for (int k = 0; k < d; ++k) {
    detail::poll_point();
    const int64_t rs = x.ranks[k], n = x.modes[k], rs1 = x.ranks[k + 1];
    const int64_t R0 = a.ranks[k], R1 = a.ranks[k + 1];
    // T1[(rc, w), (j, s')] = C[(rc, w), s] X[s, (j, s')]
    T1.assign(static_cast<std::size_t>(rc * R0 * n * rs1), 0.0);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rc * R0, n * rs1, rs, 1.0, C.data(), rs, x.cores[k].data(),
                n * rs1, 0.0, T1.data(), n * rs1);
    detail::poll_point();
    // T2[rc, i, w', s'] = sum_{w, j} T1[rc, w, j, s'] W[w, i, j, w']
    detail::apply_operator_core(rc, R0, n, R1, rs1, T1, a.cores[k], T2);
    // The products above and the split below are each up to a second at ranks 128 on a loaded host.
    detail::poll_point();
    if (k == d - 1) {  // R1 = rs1 = 1: the rest is the last core
      y.cores.push_back(T2);
      y.ranks[k] = rc;
      break;
    }
    const int64_t m = rc * n, q = R1 * rs1;
    // T2 is wide (q = rank(A) rank(x) columns, thousands for a convolution operator): only U and s
    // are computed, and the remainder diag(s) Vt of the kept rows as U^T T2 (one GEMM), which costs
    // about half of a full thin SVD's forming of Vt.
    detail::svd_rows_left(m, q, T2.data(), U, s);
    const int64_t kk = static_cast<int64_t>(s.size());
    double nsq = 0;
    for (double v : s) nsq += v * v;
    const double delta = tol_zip * std::sqrt(nsq / static_cast<double>(d - 1));
    const detail::RankChoice choice = detail::choose_rank(s.data(), kk, delta * delta, cap_zip);
    const int64_t r = choice.r;
    capped = capped || choice.capped;
    std::vector<double> core(static_cast<std::size_t>(m * r));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < r; ++j) core[i * r + j] = U[i * kk + j];
    }
    detail::poll_point();
    C.assign(static_cast<std::size_t>(r * q), 0.0);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, r, q, m, 1.0, U.data(), kk, T2.data(), q, 0.0, C.data(), q);
    y.cores.push_back(std::move(core));
    y.ranks[k] = rc;
    y.ranks[k + 1] = r;
    rc = r;
  }
  y.ranks[0] = 1;
  y.ranks[d] = 1;
  y = round(y, opt);
  return capped ? apply_fit(a, x, y, opt, 1) : y;
}

Mps hadamard(const Mps& x, const Mps& y, const SvdOptions& opt) {
  y.validate();
  Mpo diag;
  diag.modes = y.modes;
  diag.ranks = y.ranks;
  for (int k = 0; k < y.d(); ++k) {
    const int64_t r0 = y.ranks[k], n = y.modes[k], r1 = y.ranks[k + 1];
    std::vector<double> c(static_cast<std::size_t>(r0 * n * n * r1), 0.0);
    for (int64_t a = 0; a < r0; ++a) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t b = 0; b < r1; ++b) c[((a * n + i) * n + i) * r1 + b] = y.cores[k][(a * n + i) * r1 + b];
      }
    }
    diag.cores.push_back(std::move(c));
  }
  return apply(diag, x, opt);
}

}  // namespace tts::qtt
