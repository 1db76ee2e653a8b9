// TT rounding and orthogonalisation sweeps (QR for the sweeps, small SVDs for truncation).
#include <cfloat>
#include <cmath>

#include "ttstore/internal/poll_point.hpp"
#include "ttstore/internal/qtt_svd_run.hpp"
#include "ttstore/internal/rank_select.hpp"
#include "ttstore/internal/small_la.hpp"
#include "ttstore/internal/tt_checks.hpp"
#include "ttstore/tt.hpp"

namespace tts {

void orthogonalize_left(TensorTrain& tt) {
  detail::check_structure(tt, "tensor train");
  std::vector<double> Q, R;
  for (int k = 0; k + 1 < tt.d(); ++k) {
    detail::poll_point();
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    const int64_t n2 = tt.modes[k + 1], r2 = tt.ranks[k + 2];
    detail::qr_rows(r0 * n, r1, tt.cores[k].data(), Q, R);
    const int64_t r1n = static_cast<int64_t>(R.size()) / r1;  // min(r0 n, r1)
    tt.cores[k].swap(Q);
    tt.cores[k + 1] = detail::matmul(r1n, r1, n2 * r2, R.data(), tt.cores[k + 1].data());
    tt.ranks[k + 1] = r1n;
  }
  tt.f32 = false;
}

void orthogonalize_right(TensorTrain& tt) {
  detail::check_structure(tt, "tensor train");
  std::vector<double> L, Q;
  for (int k = tt.d() - 1; k >= 1; --k) {
    detail::poll_point();
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    const int64_t rp = tt.ranks[k - 1], np = tt.modes[k - 1];
    detail::lq_rows(r0, n * r1, tt.cores[k].data(), L, Q);
    const int64_t r0n = static_cast<int64_t>(L.size()) / r0;  // min(r0, n r1)
    tt.cores[k].swap(Q);
    tt.cores[k - 1] = detail::matmul(rp * np, r0, r0n, tt.cores[k - 1].data(), L.data());
    tt.ranks[k] = r0n;
  }
  tt.f32 = false;
}

TensorTrain round(const TensorTrain& in, const SvdOptions& opt) {
  detail::check_svd_options(opt);
  in.validate();
  TensorTrain tt = in;
  tt.f32 = false;
  const int d = tt.d();
  if (d == 1) return tt;
  orthogonalize_right(tt);  // now ||tt|| = ||core 0|| and every unfolding's SVD is a core SVD
  double nsq = 0;
  for (double v : tt.cores[0]) nsq += v * v;
  const double nrm = std::sqrt(nsq);
  const double delta = opt.tol > 0 ? opt.tol * nrm / std::sqrt(static_cast<double>(d - 1)) : 16 * DBL_EPSILON * nrm;
  std::vector<double> U, s, Vt;
  for (int k = 0; k + 1 < d; ++k) {
    detail::poll_point();
    const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
    const int64_t n2 = tt.modes[k + 1], r2 = tt.ranks[k + 2];
    detail::svd_rows(r0 * n, r1, tt.cores[k].data(), U, s, Vt);
    const int64_t kk = static_cast<int64_t>(s.size());
    const detail::RankChoice c = detail::choose_rank(s.data(), kk, delta * delta, opt.max_rank);
    const int64_t r = c.r;
    // core k = U[:, :r]; core k+1 = diag(s_r) Vt[:r, :] * core k+1.
    std::vector<double> Ur(static_cast<std::size_t>(r0 * n * r));
    for (int64_t i = 0; i < r0 * n; ++i) {
      for (int64_t j = 0; j < r; ++j) Ur[i * r + j] = U[i * kk + j];
    }
    std::vector<double> SV(static_cast<std::size_t>(r * r1));
    for (int64_t i = 0; i < r; ++i) {
      for (int64_t j = 0; j < r1; ++j) SV[i * r1 + j] = s[i] * Vt[i * r1 + j];
    }
    tt.cores[k].swap(Ur);
    tt.cores[k + 1] = detail::matmul(r, r1, n2 * r2, SV.data(), tt.cores[k + 1].data());
    tt.ranks[k + 1] = r;
  }
  return tt;
}

}  // namespace tts
