// The QTT layouts (row_major, interleaved) map a shape's digits to C-order offsets exactly as
// CONTRACT.md section 3 words it.
#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/layout.hpp"

using namespace tts;

static std::vector<int64_t> all_offsets(const QttLayout& L, const OffsetTables& T) {
  std::vector<int64_t> out(static_cast<std::size_t>(L.numel()));
  for (int64_t t = 0; t < L.numel(); ++t) out[t] = T.hi[t / T.n_lo] + T.lo[t % T.n_lo];
  return out;
}

static void check_against_brute(const std::vector<int64_t>& shape, LayoutKind kind) {
  const QttLayout L = make_layout(shape, kind);
  const auto brute = ttt::brute_offsets(shape, kind);
  for (int s = 0; s <= static_cast<int>(L.modes.size()); ++s) {
    const auto got = all_offsets(L, offsets_split_at(L, s));
    CHECK_MSG(got == brute, std::string(layout_name(kind)) + " split " + std::to_string(s));
  }
  const OffsetTables T = offsets_split(L);
  CHECK_EQ(T.n_hi * T.n_lo, L.numel());
  CHECK(all_offsets(L, T) == brute);
  // weights alone: offset = sum digit_k * weights[k]
  int64_t prod = 1;
  for (auto n : L.modes) prod *= n;
  CHECK_EQ(prod, L.numel());
}

TEST(interleaved_offsets_match_brute_force_2d_and_3d) {
  check_against_brute({8, 4}, LayoutKind::Interleaved);
  check_against_brute({12, 20}, LayoutKind::Interleaved);
  check_against_brute({6, 5, 8}, LayoutKind::Interleaved);
  check_against_brute({4, 1, 16, 3}, LayoutKind::Interleaved);
}

TEST(interleaved_mode_order_for_12x20) {
  // 12 = 3*4, 20 = 5*4: level 0 digits [3, 5], then bits level 1 (x, y), level 2 (x, y)
  const QttLayout L = make_layout({12, 20}, LayoutKind::Interleaved);
  CHECK(L.modes == (std::vector<int64_t>{3, 5, 2, 2, 2, 2}));
  // weights: x digit 4*20, y digit 4; x bit1 2*20, y bit1 2, x bit2 20, y bit2 1
  CHECK(L.weights == (std::vector<int64_t>{80, 4, 40, 2, 20, 1}));
}

TEST(row_major_is_the_identity) {
  for (auto shape : std::vector<std::vector<int64_t>>{{16}, {3, 1000, 7}, {6, 10}, {1009}, {2, 3, 4, 5}}) {
    const QttLayout L = make_layout(shape, LayoutKind::RowMajor);
    const auto off = all_offsets(L, offsets_split(L));
    bool ident = true;
    for (int64_t t = 0; t < L.numel(); ++t) ident = ident && off[t] == t;
    CHECK(ident);
    check_against_brute(shape, LayoutKind::RowMajor);
    // weights are the row-major strides of the modes
    int64_t stride = 1;
    for (int k = static_cast<int>(L.modes.size()) - 1; k >= 0; --k) {
      CHECK_EQ(L.weights[k], stride);
      stride *= L.modes[k];
    }
  }
  const QttLayout L = make_layout({3, 1000, 7}, LayoutKind::RowMajor);
  CHECK(L.modes == (std::vector<int64_t>{3, 125, 2, 2, 2, 7}));
}

TEST(single_element_and_unit_axes) {
  for (auto shape : std::vector<std::vector<int64_t>>{{}, {1}, {1, 1, 1}}) {
    for (auto kind : {LayoutKind::RowMajor, LayoutKind::Interleaved}) {
      const QttLayout L = make_layout(shape, kind);
      CHECK(L.modes == std::vector<int64_t>{1});
      CHECK_EQ(L.numel(), int64_t{1});
      const OffsetTables T = offsets_split(L);
      CHECK_EQ(T.hi[0] + T.lo[0], int64_t{0});
    }
  }
  const QttLayout L = make_layout({1, 8, 1}, LayoutKind::Interleaved);
  CHECK(L.modes == (std::vector<int64_t>{2, 2, 2}));
}

TEST(offsets_split_is_balanced) {
  const QttLayout L = make_layout({1024, 1024}, LayoutKind::Interleaved);
  const OffsetTables T = offsets_split(L);
  CHECK_EQ(T.n_hi, int64_t{1024});
  CHECK_EQ(T.n_lo, int64_t{1024});
}

TEST(default_layout_and_names) {
  CHECK(default_layout({1024}) == LayoutKind::RowMajor);
  CHECK(default_layout({1, 1024, 1}) == LayoutKind::RowMajor);
  CHECK(default_layout({}) == LayoutKind::RowMajor);
  CHECK(default_layout({4, 4}) == LayoutKind::RowMajor);
  CHECK(default_layout({256, 256, 256}) == LayoutKind::RowMajor);
  CHECK(layout_from_name("interleaved") == LayoutKind::Interleaved);
  CHECK(layout_from_name("row_major") == LayoutKind::RowMajor);
  CHECK(std::string(layout_name(LayoutKind::Interleaved)) == "interleaved");
  CHECK_THROWS(InvalidArgument, layout_from_name("zigzag"), "zigzag");
}

TEST(bad_shapes_throw) {
  CHECK_THROWS(InvalidArgument, make_layout({2, 2, 2, 2, 2, 2, 2, 2, 2}, LayoutKind::RowMajor), "8 axes");
  CHECK_THROWS(InvalidArgument, make_layout({4, 0}, LayoutKind::RowMajor), "axis 1");
  CHECK_THROWS(InvalidArgument, make_layout({-3}, LayoutKind::Interleaved), "size -3");
  const QttLayout L = make_layout({8}, LayoutKind::RowMajor);
  CHECK_THROWS(InvalidArgument, offsets_split_at(L, 5), "split");
}

TEST_MAIN()
