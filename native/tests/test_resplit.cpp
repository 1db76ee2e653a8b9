// Trains over mode sizes of the caller's choice (CONTRACT.md section 8, put_cores): a row_major
// layout over any split rebuilds the C-order array, resplit brings a train into the engine's split
// without changing the array, and train_work states from the header what the engine will pay.
// References: ttt::dense_mode_order (plain loops; for row_major the mode order is C order).
#include <algorithm>
#include <cstring>

#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/layout.hpp"
#include "ttstore/limits.hpp"
#include "ttstore/tt.hpp"

using namespace tts;

namespace {

struct OddSplit {
  std::vector<int64_t> shape, modes, ranks;
};

// The odd splits the contract names, plus a natural TT of a 3-D array and splits with size-1 modes.
const std::vector<OddSplit>& odd_splits() {
  static const std::vector<OddSplit> s = {
      {{2, 3, 4}, {2, 3, 4}, {1, 2, 3, 1}},
      {{4, 4}, {4, 4}, {1, 3, 1}},
      {{16}, {4, 4}, {1, 4, 1}},
      {{6}, {2, 3}, {1, 2, 1}},
      {{12}, {3, 4}, {1, 3, 1}},
      {{24}, {2, 2, 2, 3}, {1, 2, 3, 2, 1}},
      {{8, 8, 8}, {8, 8, 8}, {1, 5, 5, 1}},
      {{6}, {2, 1, 3}, {1, 2, 2, 1}},
      {{1}, {1, 1}, {1, 7, 1}},
  };
  return s;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// True when every target boundary falls on a boundary of `modes` (the resplit only splits cores).
bool refines(const std::vector<int64_t>& modes, const std::vector<int64_t>& target) {
  std::vector<int64_t> a{1}, b{1};
  for (auto n : modes) a.push_back(a.back() * n);
  for (auto n : target) b.push_back(b.back() * n);
  for (auto p : a) {
    if (std::find(b.begin(), b.end(), p) == b.end()) return false;
  }
  return true;
}

}  // namespace

TEST(row_major_layout_over_any_split_is_the_c_order_flattening) {
  for (const auto& c : odd_splits()) {
    const QttLayout L = row_major_layout(c.shape, c.modes);
    CHECK(L.modes == c.modes);
    CHECK_EQ(L.numel(), ttt::random_tt(c.modes, c.ranks, 1).numel());
    const TensorTrain tt = ttt::random_tt(c.modes, c.ranks, 7);
    const auto want = ttt::dense_mode_order(tt);  // row_major: mode order is C order
    const auto got = ttt::to_dense(tt, L);
    CHECK_MSG(ttt::max_abs_diff(got, want) <= 1e-12 * (1 + ttt::norm2(want)),
              "shape " + std::to_string(c.shape.size()));
  }
}

TEST(row_major_layout_of_the_engine_split_is_make_layout) {
  const QttLayout a = make_layout({12, 20}, LayoutKind::RowMajor);
  const QttLayout b = row_major_layout({12, 20}, a.modes);
  CHECK(a.modes == b.modes);
  CHECK(a.weights == b.weights);
}

TEST(row_major_layout_refuses_mode_sizes_of_another_product) {
  CHECK_THROWS(InvalidArgument, row_major_layout({6}, {2, 2}), "do not multiply");
  // 3 * 6 passes 6 on the way: the product is checked, not just the last stride.
  CHECK_THROWS(InvalidArgument, row_major_layout({6}, {3, 6}), "do not multiply");
  CHECK_THROWS(InvalidArgument, row_major_layout({6}, {6, 0}), ">= 1");
  CHECK_THROWS(InvalidArgument, row_major_layout({6}, {}), "at least one mode");
}

TEST(resplit_into_the_engine_split_keeps_the_array) {
  for (const auto& c : odd_splits()) {
    const TensorTrain tt = ttt::random_tt(c.modes, c.ranks, 11);
    const std::vector<int64_t> target = make_layout(c.shape, LayoutKind::RowMajor).modes;
    const TensorTrain out = resplit(tt, target);
    out.validate();
    CHECK(out.modes == target);
    const auto want = ttt::dense_mode_order(tt);
    const auto got = ttt::dense_mode_order(out);
    if (refines(c.modes, target)) {
      // Splits only: an identity on one side, so every product has one nonzero term.
      CHECK_MSG(bitwise_equal(got, want), "splits must copy values exactly");
    } else {
      CHECK_MSG(ttt::diff_norm(got, want) <= 1e-14 * ttt::norm2(want), "merges round at float64 eps");
    }
    // The library's rebuild of the resplit train agrees with the one over the original split.
    const auto rebuilt = ttt::to_dense(out, make_layout(c.shape, LayoutKind::RowMajor));
    CHECK(ttt::diff_norm(rebuilt, want) <= 1e-13 * ttt::norm2(want));
  }
}

TEST(resplit_bonds_are_the_smaller_side_of_each_unfolding) {
  // A core [1, 16, 1] split into [2, 2, 2, 2]: bonds 2, 4, 2.
  const TensorTrain one = ttt::random_tt({16}, {1, 1}, 3);
  const TensorTrain q = resplit(one, {2, 2, 2, 2});
  CHECK((q.ranks == std::vector<int64_t>{1, 2, 4, 2, 1}));
  // The middle core [2, 4, 3] into [2, 2]: the new bond is min(2 * 2, 2 * 3) = 4.
  const TensorTrain t = ttt::random_tt({2, 4, 2}, {1, 2, 3, 1}, 5);
  const TensorTrain u = resplit(t, {2, 2, 2, 2});
  CHECK((u.ranks == std::vector<int64_t>{1, 2, 4, 3, 1}));
  CHECK(bitwise_equal(ttt::dense_mode_order(u), ttt::dense_mode_order(t)));
}

TEST(resplit_keeps_float32_values_unless_cores_are_merged) {
  TensorTrain a = to_f32(ttt::random_tt({4, 4}, {1, 3, 1}, 2));
  CHECK(resplit(a, {2, 2, 2, 2}).f32);
  TensorTrain b = to_f32(ttt::random_tt({2, 3}, {1, 2, 1}, 2));
  CHECK(!resplit(b, {3, 2}).f32);
  // The same modes: the train itself.
  const TensorTrain c = resplit(a, {4, 4});
  CHECK(c.cores == a.cores);
}

TEST(resplit_refuses_another_number_of_elements) {
  const TensorTrain tt = ttt::random_tt({2, 3}, {1, 2, 1}, 1);
  CHECK_THROWS(InvalidArgument, resplit(tt, {7}), "same number of elements");
  CHECK_THROWS(InvalidArgument, resplit(tt, {6, 0}), ">= 1");
}

TEST(inner_products_of_a_resplit_train_match_the_dense_arrays) {
  // A natural TT of a 8x8x8 array against a train in the engine's split of that shape.
  const TensorTrain nat = ttt::random_tt({8, 8, 8}, {1, 4, 6, 1}, 21);
  const std::vector<int64_t> qtt = make_layout({8, 8, 8}, LayoutKind::RowMajor).modes;
  const TensorTrain eng = ttt::random_tt(qtt, {1, 2, 4, 3, 3, 4, 5, 4, 2, 1}, 22);
  const auto x = ttt::dense_mode_order(nat), y = ttt::dense_mode_order(eng);
  double want = 0;
  for (std::size_t i = 0; i < x.size(); ++i) want += x[i] * y[i];
  CHECK_REL(dot(resplit(nat, qtt), eng), want, 1e-12);
  CHECK_REL(norm(resplit(nat, qtt)), ttt::norm2(x), 1e-12);
}

TEST(train_work_counts_what_resplit_writes) {
  for (const auto& c : odd_splits()) {
    const TensorTrain tt = ttt::random_tt(c.modes, c.ranks, 4);
    const std::vector<int64_t> target = make_layout(c.shape, LayoutKind::RowMajor).modes;
    const TrainWork w = train_work(c.modes, c.ranks, target);
    const TensorTrain out = resplit(tt, target);
    if (c.modes == target) {
      CHECK_EQ(w.resplit_elements, 0.0);
    } else {
      CHECK_EQ(w.resplit_elements, static_cast<double>(out.core_elements()));
    }
    CHECK(w.resplit >= 0 && w.contraction > 0 && w.reconstruction > 0);
    CHECK(w.max() >= w.contraction && w.max() >= w.reconstruction && w.max() >= w.resplit);
  }
}

TEST(train_work_of_ranks_beyond_the_values_is_the_values) {
  // The attack of issue #19, cores [1, 1, R] and [R, 1, 1]: one value. Its norm runs over the left
  // interfaces (1 x R), never an R x R matrix: 4 R + 1 multiply-adds.
  const int64_t R = kMaxRank;
  const TrainWork w = train_work({1, 1}, {1, R, 1}, {1});
  CHECK_EQ(w.contraction, 4.0 * R + 1);
  CHECK(w.within_limits());
  // Ranks 4096 over 8 values: interfaces of 2 and 4 rows.
  const TrainWork small = train_work({2, 2, 2}, {1, R, R, 1}, {2, 2, 2});
  CHECK(small.contraction < 1e9);
  CHECK(small.within_limits());
  // Ranks 4096 the modes do hold: 2 * 4096^2 * 8192 multiply-adds in the middle core, over the bound.
  const TrainWork big = train_work({4096, 2, 4096}, {1, R, R, 1}, {4096, 2, 4096});
  CHECK(big.contraction >= 2.0 * R * R * (2.0 * R));
  CHECK(!big.within_limits());
}

TEST(train_work_limits_admit_big_qtts_of_moderate_rank_and_refuse_heavy_ranks) {
  // A QTT of 2^26 values, rank r at every inner bond (as compress makes them).
  auto qtt = [](int64_t r) {
    std::vector<int64_t> modes(26, 2), ranks{1};
    for (int k = 1; k < 26; ++k) ranks.push_back(std::min<int64_t>({r, int64_t{1} << k, int64_t{1} << (26 - k)}));
    ranks.push_back(1);
    return train_work(modes, ranks, modes);
  };
  CHECK(qtt(64).within_limits());
  CHECK(qtt(112).reconstruction > kMaxTrainWork * 0.8);  // its rebuild is allowed by the per-value bound
  CHECK(qtt(112).within_limits());
  CHECK(!qtt(256).within_limits());
}

TEST(train_work_of_a_rebuild_follows_the_chosen_split) {
  // One core [1, N, 1]: the rebuild is the core itself, N multiply-adds of the block GEMM plus its
  // interface.
  const TrainWork w = train_work({1000}, {1, 1}, {1000});
  CHECK(w.reconstruction >= 1000 && w.reconstruction <= 3000);
  CHECK_EQ(w.resplit, 0.0);
}

int main(int argc, char** argv) { return check::run_all(argc, argv); }
