// Functions with known QTT ranks come out with exactly those ranks; noise does not compress.
#include <random>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static std::vector<double> grid1d(int bits, double (*f)(double)) {
  const int64_t n = int64_t{1} << bits;
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = f(static_cast<double>(i) / n);
  return x;
}

static TensorTrain svd_of(const std::vector<double>& x, const QttLayout& L, double tol) {
  return qtt_svd(ttt::view(x), L, SvdOptions{tol, 0});
}

static std::string ranks_text(const TensorTrain& t) {
  std::string s;
  for (auto r : t.ranks) s += std::to_string(r) + " ";
  return s;
}

TEST(exponential_has_rank_one) {
  const auto x = grid1d(20, [](double t) { return std::exp(3.0 * t); });
  const QttLayout L = make_layout({int64_t{1} << 20}, LayoutKind::RowMajor);
  const TensorTrain t = svd_of(x, L, 1e-10);
  CHECK_EQ(t.d(), 20);
  CHECK_MSG(t.max_rank() == 1, ranks_text(t));
  CHECK(fingerprint(t, L, ttt::view(x)).relative_error <= 1e-10);
}

TEST(sine_has_rank_two) {
  const auto x = grid1d(20, [](double t) { return std::sin(40.0 * t + 0.3); });
  const QttLayout L = make_layout({int64_t{1} << 20}, LayoutKind::RowMajor);
  const TensorTrain t = svd_of(x, L, 1e-10);
  CHECK_MSG(t.max_rank() == 2, ranks_text(t));
  CHECK(fingerprint(t, L, ttt::view(x)).relative_error <= 1e-10);
}

TEST(cubic_polynomial_has_rank_at_most_four) {
  const auto x = grid1d(18, [](double t) { return 1.0 - 2.0 * t + 0.5 * t * t + 3.0 * t * t * t; });
  const QttLayout L = make_layout({int64_t{1} << 18}, LayoutKind::RowMajor);
  const TensorTrain t = svd_of(x, L, 1e-12);
  CHECK_MSG(t.max_rank() <= 4, ranks_text(t));
  CHECK_MSG(t.max_rank() >= 3, ranks_text(t));  // a cubic is not a quadratic
  CHECK(fingerprint(t, L, ttt::view(x)).relative_error <= 1e-12);
}

static std::vector<double> separable(double (*f)(double), double (*g)(double)) {
  const int64_t n = 1024;
  std::vector<double> x(static_cast<std::size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) x[i * n + j] = f(i / 1024.0) * g(j / 1024.0);
  }
  return x;
}

TEST(separable_2d_keeps_the_factor_ranks) {
  // exp(x) * sin(y): rank 1 times rank 2, in either layout
  const auto x =
      separable([](double t) { return std::exp(-2.0 * t); }, [](double t) { return std::sin(7.0 * t + 0.2); });
  for (auto kind : {LayoutKind::Interleaved, LayoutKind::RowMajor}) {
    const QttLayout L = make_layout({1024, 1024}, kind);
    const TensorTrain t = svd_of(x, L, 1e-10);
    CHECK_EQ(t.d(), 20);
    CHECK_MSG(t.max_rank() == 2, std::string(layout_name(kind)) + ": " + ranks_text(t));
    CHECK(fingerprint(t, L, ttt::view(x)).relative_error <= 1e-10);
  }
  // sin(x) * cos(y): row_major keeps rank 2; interleaved unfoldings mix both factors (2 x 2)
  const auto y =
      separable([](double t) { return std::sin(5.0 * t + 0.1); }, [](double t) { return std::cos(3.0 * t - 0.4); });
  const TensorTrain rm = svd_of(y, make_layout({1024, 1024}, LayoutKind::RowMajor), 1e-10);
  CHECK_MSG(rm.max_rank() == 2, ranks_text(rm));
  const TensorTrain il = svd_of(y, make_layout({1024, 1024}, LayoutKind::Interleaved), 1e-10);
  CHECK_MSG(il.max_rank() <= 4, ranks_text(il));
}

TEST(iid_noise_does_not_compress) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd;
  std::vector<double> x(1 << 14);
  for (double& v : x) v = nd(g);
  const QttLayout L = make_layout({1 << 14}, LayoutKind::RowMajor);
  const CompressResult c = compress(ttt::view(x), L, SvdOptions{1e-6, 0});
  CHECK(!c.compressible);
  // the decomposition itself needs (nearly) full ranks to meet the tolerance
  const TensorTrain t = svd_of(x, L, 1e-6);
  CHECK_MSG(t.max_rank() >= 100, ranks_text(t));
  CHECK(t.stored_bytes() >= static_cast<int64_t>(x.size() * 8));
  CHECK(fingerprint(t, L, ttt::view(x)).relative_error <= 1e-6);
}

TEST(zero_array_gives_rank_one_zero_cores) {
  std::vector<double> x(4096, 0.0);
  const QttLayout L = make_layout({64, 64}, LayoutKind::Interleaved);
  const CompressResult c = compress(ttt::view(x), L, SvdOptions{1e-6, 0});
  CHECK_EQ(c.tt.max_rank(), int64_t{1});
  for (const auto& core : c.tt.cores) {
    for (double v : core) CHECK(v == 0.0);
  }
  CHECK(c.fingerprint.relative_error == 0.0);
  CHECK(c.fingerprint.frobenius_error == 0.0);
  CHECK(c.compressible);
}

TEST(rank_cap_is_respected) {
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd;
  std::vector<double> x(1 << 12);
  for (double& v : x) v = nd(g);
  const QttLayout L = make_layout({1 << 12}, LayoutKind::RowMajor);
  const TensorTrain t = qtt_svd(ttt::view(x), L, SvdOptions{1e-6, 5});
  CHECK_EQ(t.max_rank(), int64_t{5});
  t.validate();
}

TEST_MAIN()
