// compress() meets the relative Frobenius target, and its fingerprint is what an independent dense
// computation measures.
#include <random>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

// Smooth structure (waves, a front, a bump) plus uniform noise of the given amplitude.
static std::vector<double> field_1d(int64_t n, double noise, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / n;
    double w = 0;  // a multi-scale wave: amplitudes k^-2 up to k = 64, so ranks grow with 1/tol
    for (int k = 1; k <= 64; ++k) w += std::sin(2 * M_PI * k * t + 0.7 * k) / (k * k);
    x[i] = w + 0.5 * std::tanh((t - 0.37) / 0.01) + 0.3 * std::exp(-std::pow((t - 0.7) / 0.05, 2)) + noise * u(g);
  }
  return x;
}

static std::vector<double> field_2d(int64_t n, double noise, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<std::size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double a = static_cast<double>(i) / n, b = static_cast<double>(j) / n;
      x[i * n + j] = std::sin(6 * a + 2 * b) + std::tanh((a + 0.5 * b - 0.6) / 0.02) +
                     std::exp(-((a - 0.3) * (a - 0.3) + (b - 0.6) * (b - 0.6)) / 0.01) + noise * u(g);
    }
  }
  return x;
}

static void check_target(const std::vector<double>& x, const QttLayout& L, double tol, int64_t* rank_out) {
  const CompressResult c = compress(ttt::view(x), L, SvdOptions{tol, 0});
  if (c.tt.d() == 0) {  // compress() gave up: the cores outgrew the input
    CHECK(!c.compressible);
    const TensorTrain t = qtt_svd(ttt::view(x), L, SvdOptions{tol, 0});
    CHECK(t.stored_bytes() / 2 >= static_cast<int64_t>(x.size() * 8) / 4);
    const double e64 = ttt::diff_norm(x, ttt::to_dense(t, L)) / ttt::norm2(x);
    CHECK_MSG(e64 <= tol, "incompressible, qtt_svd measured " + check::num(e64));
    *rank_out = t.max_rank();
    std::printf("  tol %g: incompressible, qtt_svd rank %lld\n", tol, static_cast<long long>(t.max_rank()));
    return;
  }
  const std::vector<double> y = ttt::to_dense(c.tt, L);
  const double err = ttt::diff_norm(x, y), nx = ttt::norm2(x);
  const std::string tag =
      "tol " + check::num(tol) + " rank " + std::to_string(c.tt.max_rank()) + " f32 " + std::to_string(c.tt.f32);
  CHECK_MSG(err / nx <= tol, tag + " measured " + check::num(err / nx));
  CHECK_REL(c.fingerprint.frobenius_error, err, 1e-8);
  CHECK_REL(c.fingerprint.relative_error, err / nx, 1e-8);
  CHECK_REL(c.fingerprint.reference_norm, nx, 1e-12);
  CHECK_REL(c.fingerprint.max_abs_error, ttt::max_abs_diff(x, y), 1e-12);
  CHECK_EQ(c.compressible, c.tt.stored_bytes() < static_cast<int64_t>(x.size() * 8));
  // the float64 decomposition alone meets tol too
  const TensorTrain t = qtt_svd(ttt::view(x), L, SvdOptions{tol, 0});
  CHECK(!t.f32);
  const double e64 = ttt::diff_norm(x, ttt::to_dense(t, L)) / nx;
  CHECK_MSG(e64 <= tol, tag + " qtt_svd measured " + check::num(e64));
  *rank_out = t.max_rank();
  std::printf("  %s: ranks max %lld, rel err %.3g (f64 %.3g), %lld bytes of %zu\n", tag.c_str(),
              static_cast<long long>(c.tt.max_rank()), err / nx, e64, static_cast<long long>(c.tt.stored_bytes()),
              x.size() * 8);
}

TEST(tolerance_met_1d_smooth_plus_noise) {
  const QttLayout L = make_layout({int64_t{1} << 16}, LayoutKind::RowMajor);
  int64_t prev = 0;
  for (double tol : {1e-2, 1e-4, 1e-6, 1e-9}) {
    const auto x = field_1d(int64_t{1} << 16, 0.1 * tol, 1);  // noise inside the error budget
    int64_t r = 0;
    check_target(x, L, tol, &r);
    CHECK(r >= prev);  // tighter targets never need smaller ranks
    prev = r;
  }
  CHECK(prev > 8);  // the noise made the tight targets nontrivial
}

TEST(tolerance_met_2d_smooth_plus_noise) {
  for (auto kind : {LayoutKind::Interleaved, LayoutKind::RowMajor}) {
    const QttLayout L = make_layout({512, 512}, kind);
    for (double tol : {1e-2, 1e-4, 1e-6, 1e-9}) {
      const auto x = field_2d(512, 0.1 * tol, 2);
      int64_t r = 0;
      check_target(x, L, tol, &r);
    }
  }
}

TEST(tolerance_met_3d_odd_sizes) {
  // 24 x 40 x 72: odd digits 3, 5, 9 and bits, interleaved
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> u(-1, 1);
  const std::vector<int64_t> shape{24, 40, 72};
  std::vector<double> x(24 * 40 * 72);
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 40; ++j)
      for (int k = 0; k < 72; ++k)
        x[(i * 40 + j) * 72 + k] =
            std::cos(0.2 * i + 0.1 * j) * std::exp(-0.02 * k) + std::tanh((i - 0.3 * k - 3.0) / 2.0) + 1e-10 * u(g);
  const QttLayout L = make_layout(shape, LayoutKind::Interleaved);
  for (double tol : {1e-2, 1e-4, 1e-6, 1e-9}) {
    int64_t r = 0;
    check_target(x, L, tol, &r);
  }
}

TEST(lossless_tolerance_zero) {
  // tol 0 keeps everything above the float64 rounding floor
  const auto x = field_1d(int64_t{1} << 12, 1e-3, 3);
  const QttLayout L = make_layout({int64_t{1} << 12}, LayoutKind::RowMajor);
  const TensorTrain t = qtt_svd(ttt::view(x), L, SvdOptions{0.0, 0});
  CHECK(ttt::diff_norm(x, ttt::to_dense(t, L)) / ttt::norm2(x) < 1e-13);
}

TEST_MAIN()
