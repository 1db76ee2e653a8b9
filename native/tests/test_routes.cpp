// The three ways of factoring a wide unfolding (Gram, measured Gram, TSQR) agree where each is
// valid, and the automatic choice keeps the TSQR ranks at tight tolerances.
#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/internal/qtt_svd_run.hpp"

using namespace tts;
using detail::Route;

static std::vector<double> multiscale(int64_t n) {
  std::vector<double> x(static_cast<std::size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = static_cast<double>(i) / n, b = static_cast<double>(j) / n;
      double v = std::tanh((a + 0.6 * b - 0.7) / 0.01);
      for (int k = 1; k <= 30; ++k) v += std::sin(2 * M_PI * k * (a + 0.3 * b * b) + k) / (k * k);
      x[i * n + j] = v;
    }
  }
  return x;
}

static TensorTrain run(const std::vector<double>& x, const QttLayout& L, double tol, Route r,
                       detail::SvdRun* out = nullptr) {
  detail::SvdRun run;
  run.force_route = r;
  TensorTrain t = detail::qtt_svd_run(ttt::view(x), L, SvdOptions{tol, 0}, {}, run);
  if (out) *out = run;
  return t;
}

TEST(routes_agree_at_moderate_tolerance) {
  const auto x = multiscale(256);
  const QttLayout L = make_layout({256, 256}, LayoutKind::Interleaved);
  const double tol = 1e-4;
  const TensorTrain a = run(x, L, tol, Route::Gram), b = run(x, L, tol, Route::MeasuredGram),
                    c = run(x, L, tol, Route::Tsqr);
  CHECK(a.ranks == c.ranks);
  CHECK(b.ranks == c.ranks);
  for (const TensorTrain* t : {&a, &b, &c}) {
    CHECK(ttt::diff_norm(x, ttt::to_dense(*t, L)) <= tol * ttt::norm2(x));
  }
}

TEST(auto_route_keeps_tsqr_ranks_when_tight) {
  const auto x = multiscale(256);
  const QttLayout L = make_layout({256, 256}, LayoutKind::Interleaved);
  for (double tol : {1e-6, 1e-8, 1e-10}) {
    detail::SvdRun info;
    const TensorTrain a = run(x, L, tol, Route::Auto, &info);
    const TensorTrain t = run(x, L, tol, Route::Tsqr);
    CHECK_MSG(a.ranks == t.ranks, "tol " + check::num(tol));
    CHECK(ttt::diff_norm(x, ttt::to_dense(a, L)) <= tol * ttt::norm2(x));
    // the error bound the sweep reports is the measured error (up to rounding)
    const double err = ttt::diff_norm(x, ttt::to_dense(a, L));
    CHECK_NEAR(std::sqrt(info.discarded_sq), err, 1e-3 * err + 1e-13 * ttt::norm2(x));
  }
}

TEST(measured_gram_never_misses_the_tolerance) {
  // Far below its comfort zone the measured-Gram route loses rank optimality, never accuracy.
  const auto x = multiscale(128);
  const QttLayout L = make_layout({128, 128}, LayoutKind::Interleaved);
  for (double tol : {1e-8, 1e-11}) {
    const TensorTrain b = run(x, L, tol, Route::MeasuredGram);
    CHECK(ttt::diff_norm(x, ttt::to_dense(b, L)) <= tol * ttt::norm2(x));
  }
}

TEST_MAIN()
