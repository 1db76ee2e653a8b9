// dot, norm, distance and dot_batch from the cores agree with the dense arrays.
#include "check.hpp"
#include "tt_testing.hpp"

using namespace tts;

static double dense_dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

static const std::vector<int64_t> kModes{2, 3, 2, 2, 5, 2, 4};

TEST(dot_and_norm_match_dense) {
  const TensorTrain a = ttt::random_tt(kModes, {1, 2, 4, 3, 5, 3, 2, 1}, 1);
  const TensorTrain b = ttt::random_tt(kModes, {1, 3, 2, 6, 2, 4, 3, 1}, 2);
  const auto x = ttt::dense_mode_order(a), y = ttt::dense_mode_order(b);
  CHECK_REL(dot(a, b), dense_dot(x, y), 1e-10);
  CHECK_REL(dot(b, a), dense_dot(x, y), 1e-10);
  CHECK_REL(norm(a), ttt::norm2(x), 1e-10);
  CHECK_REL(distance(a, b), ttt::diff_norm(x, y), 1e-10);
  CHECK_NEAR(distance(a, a), 0.0, 1e-12 * norm(a));
}

TEST(large_rank_contractions_issued_in_gemm_pieces_match_dense) {
  // Each product here is several times kGemmPieceWork, so both GEMMs of a core go in pieces, along
  // rows (M times a core) and along columns (the transposed core times T).
  const TensorTrain a = ttt::random_tt({2, 2, 2}, {1, 700, 700, 1}, 5);
  const TensorTrain b = ttt::random_tt({2, 2, 2}, {1, 700, 300, 1}, 6);
  const auto x = ttt::dense_mode_order(a), y = ttt::dense_mode_order(b);
  CHECK_REL(dot(a, b), dense_dot(x, y), 1e-10);
  CHECK_REL(dot(b, a), dense_dot(x, y), 1e-10);
  CHECK_REL(norm(a), ttt::norm2(x), 1e-10);
}

TEST(trains_with_ranks_beyond_their_values_contract_over_interfaces) {
  // Ranks the first modes cannot fill (a client's train may carry them): the contraction starts
  // over the left interfaces, and agrees with the dense arrays like any other.
  const TensorTrain a = ttt::random_tt({2, 3, 2, 2}, {1, 40, 50, 6, 1}, 8);
  const TensorTrain b = ttt::random_tt({2, 3, 2, 2}, {1, 2, 6, 4, 1}, 9);
  const TensorTrain c = ttt::random_tt({1, 1}, {1, 300, 1}, 10);
  const auto x = ttt::dense_mode_order(a), y = ttt::dense_mode_order(b);
  CHECK_REL(dot(a, b), dense_dot(x, y), 1e-10);
  CHECK_REL(dot(b, a), dense_dot(x, y), 1e-10);
  CHECK_REL(norm(a), ttt::norm2(x), 1e-10);
  CHECK_REL(norm(c), ttt::norm2(ttt::dense_mode_order(c)), 1e-10);
}

TEST(distance_is_accurate_for_nearby_trains) {
  const TensorTrain a = ttt::random_tt(kModes, {1, 2, 4, 3, 5, 3, 2, 1}, 3);
  for (double eps : {1e-3, 1e-5}) {
    TensorTrain b = a;
    for (double& v : b.cores[3]) v *= 1 + eps;  // b = (1 + eps) a
    const auto x = ttt::dense_mode_order(a), y = ttt::dense_mode_order(b);
    const double want = ttt::diff_norm(x, y);
    CHECK_REL(distance(a, b), want, 1e-10);
    CHECK_REL(distance(a, b), eps * norm(a), 1e-9);
  }
}

TEST(single_core_trains) {
  TensorTrain a, b;
  a.modes = b.modes = {5};
  a.ranks = b.ranks = {1, 1};
  a.cores = {{1, 2, 3, 4, 5}};
  b.cores = {{2, 0, -1, 1, 0.5}};
  CHECK_REL(dot(a, b), 2 + 0 - 3 + 4 + 2.5, 1e-15);
  CHECK_REL(distance(a, b), std::sqrt(1 + 4 + 16 + 9 + 20.25), 1e-15);
}

TEST(dot_batch_matches_individual_dots) {
  const TensorTrain q = ttt::random_tt(kModes, {1, 2, 3, 3, 2, 3, 2, 1}, 10);
  std::vector<TensorTrain> cs;
  for (int j = 0; j < 9; ++j) {
    cs.push_back(ttt::random_tt(kModes, {1, 2, 1 + j % 4, 3, 2 + j % 3, 3, 2, 1}, 100 + j));
  }
  std::vector<const TensorTrain*> ptrs;
  for (const auto& c : cs) ptrs.push_back(&c);
  const auto got = dot_batch(q, ptrs);
  CHECK_EQ(got.size(), cs.size());
  const auto x = ttt::dense_mode_order(q);
  for (std::size_t j = 0; j < cs.size(); ++j) {
    CHECK_REL(got[j], dense_dot(x, ttt::dense_mode_order(cs[j])), 1e-10);
  }
  // large ranks take the serial path; same answers
  const TensorTrain big = ttt::random_tt({2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {1, 2, 4, 8, 16, 32, 16, 8, 4, 2, 1}, 5);
  const auto bd = dot_batch(big, {&big, &big});
  CHECK_REL(bd[0], dot(big, big), 1e-12);
  CHECK(dot_batch(q, {}).empty());
}

TEST(mismatched_modes_throw) {
  const TensorTrain a = ttt::random_tt({2, 2, 2}, {1, 2, 2, 1}, 1);
  const TensorTrain b = ttt::random_tt({2, 4}, {1, 2, 1}, 2);
  CHECK_THROWS(InvalidArgument, dot(a, b), "mode sizes differ");
  CHECK_THROWS(InvalidArgument, distance(a, b), "mode sizes differ");
  CHECK_THROWS(InvalidArgument, dot_batch(a, {&a, &a, &b}), "candidate 2");
  CHECK_THROWS(InvalidArgument, dot_batch(a, {&a, nullptr}), "candidate 1");
}

TEST(compressed_fields_compare_like_their_reconstructions) {
  // two smooth fields through compress(): scores from cores vs from dense reconstructions
  const int64_t n = 1 << 14;
  std::vector<double> u(n), v(n);
  for (int64_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / n;
    u[i] = std::sin(9 * t) + 0.1 * t;
    v[i] = std::sin(9 * t + 0.01) + 0.1 * t * t;
  }
  const QttLayout L = make_layout({n}, LayoutKind::RowMajor);
  const TensorTrain a = qtt_svd(ttt::view(u), L, SvdOptions{1e-10, 0});
  const TensorTrain b = qtt_svd(ttt::view(v), L, SvdOptions{1e-10, 0});
  const auto x = ttt::to_dense(a, L), y = ttt::to_dense(b, L);
  CHECK_REL(dot(a, b), dense_dot(x, y), 1e-10);
  CHECK_REL(distance(a, b), ttt::diff_norm(x, y), 1e-10);
  CHECK_REL(norm(b), ttt::norm2(y), 1e-10);
}

TEST_MAIN()
