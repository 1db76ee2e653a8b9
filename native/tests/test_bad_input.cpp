// Bad input is an InvalidArgument with a message that says what is wrong; nothing else escapes.
#include <limits>

#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static std::vector<double> ramp(int64_t n) {
  std::vector<double> x(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5 + static_cast<double>(i) / n;
  return x;
}

TEST(non_finite_input_names_the_element) {
  const QttLayout L = make_layout({16, 8}, LayoutKind::Interleaved);
  auto x = ramp(128);
  x[77] = std::numeric_limits<double>::quiet_NaN();
  x[90] = std::numeric_limits<double>::infinity();
  CHECK_THROWS(InvalidArgument, qtt_svd(ttt::view(x), L, SvdOptions{}), "NaN) at flat index 77 (index [9, 5])");
  CHECK_THROWS(InvalidArgument, compress(ttt::view(x), L, SvdOptions{}), "77");
  x[77] = 1;
  CHECK_THROWS(InvalidArgument, compress(ttt::view(x), L, SvdOptions{}), "Inf) at flat index 90");
  std::vector<float> f(128, 1.0f);
  f[3] = -std::numeric_limits<float>::infinity();
  CHECK_THROWS(InvalidArgument, compress(ArrayView{f.data(), DType::F32, 128}, L, SvdOptions{}), "-Inf");
}

TEST(options_out_of_range) {
  const QttLayout L = make_layout({64}, LayoutKind::RowMajor);
  const auto x = ramp(64);
  CHECK_THROWS(InvalidArgument, qtt_svd(ttt::view(x), L, SvdOptions{1.5, 0}), "tol must be in [0, 1)");
  CHECK_THROWS(InvalidArgument, qtt_svd(ttt::view(x), L, SvdOptions{1.0, 0}), "tol");
  CHECK_THROWS(InvalidArgument, compress(ttt::view(x), L, SvdOptions{-1e-3, 0}), "tol");
  CHECK_THROWS(InvalidArgument, compress(ttt::view(x), L, SvdOptions{std::nan(""), 0}), "tol");
  CHECK_THROWS(InvalidArgument, compress(ttt::view(x), L, SvdOptions{1e-3, -2}), "max_rank");
  const TensorTrain t = qtt_svd(ttt::view(x), L, SvdOptions{1e-6, 0});
  CHECK_THROWS(InvalidArgument, round(t, SvdOptions{1.5, 0}), "tol");
  CHECK_THROWS(InvalidArgument, set_threads(-1), "thread");
}

TEST(shape_and_length_mismatch) {
  const QttLayout L = make_layout({8, 8}, LayoutKind::Interleaved);
  const auto x = ramp(60);
  CHECK_THROWS(InvalidArgument, qtt_svd(ttt::view(x), L, SvdOptions{}), "60 elements");
  CHECK_THROWS(InvalidArgument, compress(ArrayView{x.data(), DType::F64, 0}, L, SvdOptions{}), "empty");
  CHECK_THROWS(InvalidArgument, compress(ArrayView{nullptr, DType::F64, 64}, L, SvdOptions{}), "no data");
  CHECK_THROWS(InvalidArgument, qtt_svd(ttt::view(x), QttLayout{}, SvdOptions{}), "layout");

  const auto y = ramp(64);
  const TensorTrain t = qtt_svd(ttt::view(y), L, SvdOptions{1e-8, 0});
  std::vector<double> out(64);
  CHECK_THROWS(InvalidArgument, reconstruct(t, L, MutableArrayView{out.data(), DType::F64, 63}, ArrayView{}), "63");
  CHECK_THROWS(InvalidArgument, reconstruct(t, L, MutableArrayView{}, ArrayView{}), "output or a reference");
  CHECK_THROWS(InvalidArgument, fingerprint(t, L, ArrayView{}), "reference");
  CHECK_THROWS(InvalidArgument, fingerprint(t, L, ArrayView{y.data(), DType::F64, 32}), "32 elements");
  const QttLayout other = make_layout({4, 16}, LayoutKind::RowMajor);
  CHECK_THROWS(InvalidArgument, fingerprint(t, make_layout({3, 3}, LayoutKind::RowMajor), ttt::view(y)), "modes");
  (void)other;
}

TEST(validate_explains_broken_trains) {
  TensorTrain t = ttt::random_tt({2, 2, 2, 2}, {1, 2, 4, 2, 1}, 1);
  t.validate();
  TensorTrain a = t;
  a.cores[2].resize(12);
  CHECK_THROWS(InvalidArgument, a.validate(), "core 2 has 12 elements, expected 4*2*2=16");
  TensorTrain b = t;
  b.ranks[4] = 2;
  CHECK_THROWS(InvalidArgument, b.validate(), "boundary ranks");
  TensorTrain c = t;
  c.cores[1][3] = std::numeric_limits<double>::infinity();
  CHECK_THROWS(InvalidArgument, c.validate(), "core 1 element 3 is not finite");
  TensorTrain e = t;
  e.f32 = true;
  CHECK_THROWS(InvalidArgument, e.validate(), "float32");
  TensorTrain f = t;
  f.ranks.pop_back();
  CHECK_THROWS(InvalidArgument, f.validate(), "ranks has 4 entries");
  CHECK_THROWS(InvalidArgument, TensorTrain{}.validate(), "at least one core");
  TensorTrain g = t;
  g.modes[0] = 0;
  CHECK_THROWS(InvalidArgument, g.validate(), "mode 0");
  CHECK_THROWS(InvalidArgument, round(a, SvdOptions{}), "core 2");
  CHECK_THROWS(InvalidArgument, dot(a, t), "core 2");
  CHECK_THROWS(InvalidArgument, norm(TensorTrain{}), "no cores");
}

TEST(engine_info_reports_the_backend) {
  const EngineInfo e = engine_info();
  CHECK(!e.version.empty());
  CHECK(e.backend == "cpu");
  CHECK_MSG(e.blas.find("OpenBLAS") != std::string::npos, e.blas);
  CHECK(e.threads >= 1);
  set_threads(1);
  CHECK_EQ(engine_info().threads, 1);
  set_threads(0);
  CHECK(engine_info().threads >= 1);
}

TEST_MAIN()
