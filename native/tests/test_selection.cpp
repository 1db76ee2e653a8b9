// Parts of an array read from its cores (ttstore/selection.hpp): a coarse level, then a region or
// points, equal to block-averaging and slicing the full reconstruction; the same selection of a dense
// array (select_dense); and the checks that refuse a bad selection before any work.
#include "ttstore/selection.hpp"

#include <algorithm>
#include <random>

#include "check.hpp"
#include "tt_testing.hpp"
#include "ttstore/layout.hpp"

using namespace tts;

namespace {

int pow2_factor(int64_t n) {
  int b = 0;
  while (n % 2 == 0) {
    n /= 2;
    ++b;
  }
  return b;
}

// The coarse array of a C-order `full`: plain loops over every fine cell.
std::vector<double> block_average(const std::vector<double>& full, const std::vector<int64_t>& shape,
                                  const std::vector<int>& level, std::vector<int64_t>& coarse) {
  const int na = static_cast<int>(shape.size());
  coarse = shape;
  for (int a = 0; a < na; ++a) coarse[a] >>= level[a];
  int64_t nc = 1;
  for (auto n : coarse) nc *= n;
  std::vector<double> out(static_cast<std::size_t>(nc), 0.0);
  double cells = 1;
  for (int l : level) cells *= static_cast<double>(int64_t{1} << l);
  for (std::size_t f = 0; f < full.size(); ++f) {
    int64_t rest = static_cast<int64_t>(f), co = 0, mult = 1;
    for (int a = na - 1; a >= 0; --a) {
      const int64_t i = rest % shape[a];
      rest /= shape[a];
      co += (i >> level[a]) * mult;
      mult *= coarse[a];
    }
    out[co] += full[f] / cells;
  }
  return out;
}

int64_t c_offset(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t off = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) off = off * shape[a] + idx[a];
  return off;
}

// A random normalised slice of an axis of size n (negative steps and empty slices included).
AxisSlice random_slice(int64_t n, std::mt19937_64& g) {
  std::uniform_int_distribution<int64_t> pick(0, n - 1), steps(1, 3);
  AxisSlice r;
  r.start = pick(g);
  r.step = steps(g) * ((g() & 1) ? 1 : -1);
  if (r.step > 0) {
    r.stop = std::uniform_int_distribution<int64_t>(r.start, n)(g);
  } else {
    r.stop = std::uniform_int_distribution<int64_t>(-1, r.start)(g);
  }
  if (g() % 4 == 0) {  // the whole axis
    r = AxisSlice{0, n, 1};
  }
  return r;
}

std::vector<double> slice_reference(const std::vector<double>& coarse_full, const std::vector<int64_t>& coarse,
                                    const std::vector<AxisSlice>& region) {
  const int na = static_cast<int>(coarse.size());
  std::vector<int64_t> counts(na);
  int64_t n = 1;
  for (int a = 0; a < na; ++a) n *= (counts[a] = region[a].count());
  std::vector<double> out(static_cast<std::size_t>(n));
  std::vector<int64_t> idx(na);
  for (int64_t o = 0; o < n; ++o) {
    int64_t rest = o;
    for (int a = na - 1; a >= 0; --a) {
      idx[a] = region[a].start + (rest % counts[a]) * region[a].step;
      rest /= counts[a];
    }
    out[o] = coarse_full[c_offset(idx, coarse)];
  }
  return out;
}

double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::fabs(v));
  return m;
}

// Checks `got` against `want` to 1e-12 relative to the array's largest value.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double scale,
                  const std::string& what) {
  if (got.size() != want.size()) {
    check::fail(__FILE__, __LINE__,
                what + ": " + std::to_string(got.size()) + " values, expected " + std::to_string(want.size()));
    return;
  }
  const double err = ttt::max_abs_diff(got, want);
  if (!(err <= 1e-12 * std::max(scale, 1e-300)))
    check::fail_bound(__FILE__, __LINE__, what.c_str(), err, 0, "scale", scale);
}

struct Case {
  std::vector<int64_t> shape;
  LayoutKind kind;
  std::vector<int64_t> modes;  // empty: the layout's own; else a row_major split of the caller's
};

void run_case(const Case& c, uint64_t seed) {
  const QttLayout L = c.modes.empty() ? make_layout(c.shape, c.kind) : row_major_layout(c.shape, c.modes);
  std::vector<int64_t> ranks(L.modes.size() + 1, 3);
  ranks.front() = ranks.back() = 1;
  const TensorTrain tt = ttt::random_tt(L.modes, ranks, seed);
  const std::vector<double> full = ttt::to_dense(tt, L);
  const double scale = max_abs(full);
  std::mt19937_64 g(seed * 7919 + 1);
  const int na = static_cast<int>(c.shape.size());
  std::string name = "shape [";
  for (auto n : c.shape) name += std::to_string(n) + ",";
  name += std::string("] ") + layout_name(c.kind) + (c.modes.empty() ? "" : " (caller's split)");

  for (int trial = 0; trial < 12; ++trial) {
    Selection s;
    s.level.assign(na, 0);
    if (trial % 3 != 0) {
      for (int a = 0; a < na; ++a) s.level[a] = static_cast<int>(g() % (pow2_factor(c.shape[a]) + 1));
    }
    std::vector<int64_t> coarse;
    const std::vector<double> cfull = block_average(full, c.shape, s.level, coarse);
    if (trial % 2 == 0) {
      for (int a = 0; a < na; ++a) s.region.push_back(random_slice(coarse[a], g));
      const std::vector<double> want = slice_reference(cfull, coarse, s.region);
      std::vector<double> got(want.size());
      reconstruct_selection(tt, L, s, MutableArrayView{got.data(), DType::F64, static_cast<int64_t>(got.size())});
      expect_close(got, want, scale, name + " region, trial " + std::to_string(trial));
      std::vector<double> dense(want.size());
      select_dense(ttt::view(full), c.shape, s,
                   MutableArrayView{dense.data(), DType::F64, static_cast<int64_t>(dense.size())});
      expect_close(dense, want, scale, name + " dense region, trial " + std::to_string(trial));
      if (selection_work(tt.modes, tt.ranks, L, s) <= 0 && !want.empty()) {
        check::fail(__FILE__, __LINE__, name + ": a non-empty selection reported no work");
      }
    } else {
      s.by_points = true;
      const int64_t np = 1 + static_cast<int64_t>(g() % 40);
      std::vector<double> want;
      std::vector<int64_t> idx(na);
      for (int64_t p = 0; p < np; ++p) {
        for (int a = 0; a < na; ++a) idx[a] = static_cast<int64_t>(g() % coarse[a]);
        s.points.insert(s.points.end(), idx.begin(), idx.end());
        want.push_back(cfull[c_offset(idx, coarse)]);
      }
      std::vector<double> got(want.size());
      reconstruct_selection(tt, L, s, MutableArrayView{got.data(), DType::F64, np});
      expect_close(got, want, scale, name + " points, trial " + std::to_string(trial));
      std::vector<double> dense(want.size());
      select_dense(ttt::view(full), c.shape, s, MutableArrayView{dense.data(), DType::F64, np});
      expect_close(dense, want, scale, name + " dense points, trial " + std::to_string(trial));
    }
  }
}

TEST(selections_equal_slicing_and_averaging_the_full_reconstruction) {
  const std::vector<std::vector<int64_t>> shapes = {{64},      {45},         {96},         {16, 32},
                                                    {12, 20},  {7, 8},       {1, 16},      {8, 4, 16},
                                                    {6, 5, 8}, {4, 8, 2, 4}, {3, 4, 5, 8}, {2, 1, 6, 4}};
  uint64_t seed = 1;
  for (const auto& shape : shapes) {
    for (LayoutKind kind : {LayoutKind::RowMajor, LayoutKind::Interleaved}) run_case({shape, kind, {}}, seed++);
  }
}

TEST(trains_over_a_callers_split_select_the_same_values) {
  const std::vector<Case> cases = {
      {{16, 32}, LayoutKind::RowMajor, {8, 64}},
      {{12, 20}, LayoutKind::RowMajor, {3, 80}},
      {{8, 4, 16}, LayoutKind::RowMajor, {32, 2, 8}},
      {{6, 5, 8}, LayoutKind::RowMajor, {240}},
      {{4, 8, 2, 4}, LayoutKind::RowMajor, {2, 2, 2, 2, 2, 2, 2, 2}},
  };
  uint64_t seed = 100;
  for (const auto& c : cases) run_case(c, seed++);
}

// Ranks of 64 make a selection of 2^18 values larger than one tile (kSelectionStateValues / 64): it is
// read in pieces, and they join up.
TEST(a_selection_larger_than_a_tile_is_read_in_tiles) {
  const std::vector<int64_t> shape = {512, 512};
  for (LayoutKind kind : {LayoutKind::RowMajor, LayoutKind::Interleaved}) {
    const QttLayout L = make_layout(shape, kind);
    std::vector<int64_t> ranks(L.modes.size() + 1, 64);
    for (std::size_t k = 0; k < 6; ++k) ranks[k] = ranks[ranks.size() - 1 - k] = int64_t{1} << k;
    const TensorTrain tt = ttt::random_tt(L.modes, ranks, 77);
    const std::vector<double> full = ttt::to_dense(tt, L);
    Selection whole;
    whole.region = {AxisSlice{0, 512, 1}, AxisSlice{0, 512, 1}};
    std::vector<double> got(full.size());
    reconstruct_selection(tt, L, whole, MutableArrayView{got.data(), DType::F64, static_cast<int64_t>(got.size())});
    expect_close(got, full, max_abs(full), std::string("whole region, ") + layout_name(kind));
    Selection pts;
    pts.by_points = true;
    std::vector<double> want;
    for (int64_t p = 0; p < 100000; ++p) {
      const int64_t i = (p * 7919) % 512, j = (p * 104729 + 3) % 512;
      pts.points.insert(pts.points.end(), {i, j});
      want.push_back(full[i * 512 + j]);
    }
    std::vector<double> pv(want.size());
    reconstruct_selection(tt, L, pts, MutableArrayView{pv.data(), DType::F64, static_cast<int64_t>(pv.size())});
    expect_close(pv, want, max_abs(full), std::string("100000 points, ") + layout_name(kind));
  }
}

TEST(a_float32_selection_is_cast_as_serve_casts) {
  const QttLayout L = make_layout({16, 16}, LayoutKind::RowMajor);
  std::vector<int64_t> ranks(L.modes.size() + 1, 2);
  ranks.front() = ranks.back() = 1;
  const TensorTrain tt = ttt::random_tt(L.modes, ranks, 5);
  const std::vector<double> full = ttt::to_dense(tt, L);
  Selection s;
  s.region = {AxisSlice{3, 4, 1}, AxisSlice{15, -1, -1}};
  std::vector<float> got(16);
  reconstruct_selection(tt, L, s, MutableArrayView{got.data(), DType::F32, 16});
  for (int j = 0; j < 16; ++j) {
    CHECK(got[j] == static_cast<float>(full[3 * 16 + (15 - j)]));
  }
}

// A rank-2 train of f(i, j, k) = i + 2 j + 3 k on a 4096^3 grid (2^36 values, 512 GiB as float64):
// its planes, points and coarse views come from the cores alone.
TEST(a_4096_cubed_train_is_read_in_parts) {
  const std::vector<int64_t> shape = {4096, 4096, 4096};
  const QttLayout L = make_layout(shape, LayoutKind::RowMajor);
  TensorTrain tt;
  tt.modes = L.modes;
  const int d = tt.d();
  tt.ranks.assign(d + 1, 2);
  tt.ranks.front() = tt.ranks.back() = 1;
  for (int k = 0; k < d; ++k) {
    const double c = static_cast<double>(k / 12 + 1) * static_cast<double>(int64_t{1} << (11 - k % 12));
    const int64_t r0 = tt.ranks[k], r1 = tt.ranks[k + 1];
    std::vector<double> core(static_cast<std::size_t>(r0 * 2 * r1), 0.0);
    for (int64_t digit = 0; digit < 2; ++digit) {
      // [[1, c digit], [0, 1]], the first core its top row, the last its right column
      auto at = [&](int64_t a, int64_t b) -> double& { return core[(a * 2 + digit) * r1 + b]; };
      if (k == 0) {
        at(0, 0) = 1;
        at(0, 1) = c * digit;
      } else if (k == d - 1) {
        at(0, 0) = c * digit;
        at(1, 0) = 1;
      } else {
        at(0, 0) = 1;
        at(0, 1) = c * digit;
        at(1, 1) = 1;
      }
    }
    tt.cores.push_back(std::move(core));
  }
  auto f = [](double i, double j, double k) { return i + 2 * j + 3 * k; };

  Selection plane;  // [:, 1000, :] of every 16th cell
  plane.region = {AxisSlice{0, 4096, 16}, AxisSlice{1000, 1001, 1}, AxisSlice{4095, -1, -16}};
  const std::vector<int64_t> ps = selection_shape(shape, plane);
  CHECK(ps == (std::vector<int64_t>{256, 1, 256}));
  std::vector<double> got(256 * 256);
  reconstruct_selection(tt, L, plane, MutableArrayView{got.data(), DType::F64, 256 * 256});
  double err = 0;
  for (int64_t a = 0; a < 256; ++a) {
    for (int64_t b = 0; b < 256; ++b) err = std::max(err, std::fabs(got[a * 256 + b] - f(16 * a, 1000, 4095 - 16 * b)));
  }
  CHECK(err <= 1e-12 * 6 * 4096);

  Selection pts;
  pts.by_points = true;
  std::mt19937_64 g(3);
  std::vector<double> want;
  for (int p = 0; p < 1000; ++p) {
    const int64_t i = g() % 4096, j = g() % 4096, k = g() % 4096;
    pts.points.insert(pts.points.end(), {i, j, k});
    want.push_back(f(i, j, k));
  }
  std::vector<double> pv(1000);
  reconstruct_selection(tt, L, pts, MutableArrayView{pv.data(), DType::F64, 1000});
  CHECK(ttt::max_abs_diff(pv, want) <= 1e-12 * 6 * 4096);

  Selection coarse;  // level 5 everywhere, then a 128 x 128 x 1 block of the 128^3 coarse grid
  coarse.level = {5, 5, 5};
  coarse.region = {AxisSlice{0, 128, 1}, AxisSlice{0, 128, 1}, AxisSlice{64, 65, 1}};
  std::vector<double> cv(128 * 128);
  reconstruct_selection(tt, L, coarse, MutableArrayView{cv.data(), DType::F64, 128 * 128});
  err = 0;
  for (int64_t a = 0; a < 128; ++a) {
    for (int64_t b = 0; b < 128; ++b) {
      err = std::max(err, std::fabs(cv[a * 128 + b] - f(32 * a + 15.5, 32 * b + 15.5, 32 * 64 + 15.5)));
    }
  }
  CHECK(err <= 1e-12 * 6 * 4096);
  CHECK(selection_work(tt.modes, tt.ranks, L, pts) < 1e7);
}

TEST(a_single_element_and_a_fully_averaged_array_select_their_one_value) {
  const TensorTrain one = ttt::random_tt({1}, {1, 1}, 3);
  Selection none;
  double v = 0;
  reconstruct_selection(one, make_layout({}, LayoutKind::RowMajor), none, MutableArrayView{&v, DType::F64, 1});
  CHECK(v == one.cores[0][0]);
  const QttLayout L = make_layout({8, 4}, LayoutKind::Interleaved);
  const TensorTrain tt = ttt::random_tt(L.modes, {1, 2, 3, 2, 2, 1}, 4);
  const std::vector<double> full = ttt::to_dense(tt, L);
  Selection all;
  all.level = {3, 2};
  all.region = {AxisSlice{0, 1, 1}, AxisSlice{0, 1, 1}};
  reconstruct_selection(tt, L, all, MutableArrayView{&v, DType::F64, 1});
  double mean = 0;
  for (double x : full) mean += x / 32;
  CHECK(std::fabs(v - mean) <= 1e-12 * max_abs(full));
}

TEST(bad_selections_are_refused_before_any_work) {
  const std::vector<int64_t> shape = {12, 8};
  auto refused = [&](const Selection& s) {
    try {
      selection_shape(shape, s);
    } catch (const InvalidArgument&) {
      return true;
    }
    return false;
  };
  Selection zero_step;
  zero_step.region = {AxisSlice{0, 12, 0}, AxisSlice{0, 8, 1}};
  CHECK(refused(zero_step));
  Selection out_of_range;
  out_of_range.region = {AxisSlice{0, 13, 1}, AxisSlice{0, 8, 1}};
  CHECK(refused(out_of_range));
  Selection arity;
  arity.region = {AxisSlice{0, 12, 1}};
  CHECK(refused(arity));
  Selection too_deep;
  too_deep.level = {3, 0};  // 12 = 3 * 2^2
  too_deep.region = {AxisSlice{0, 1, 1}, AxisSlice{0, 8, 1}};
  CHECK(refused(too_deep));
  Selection point;
  point.by_points = true;
  point.points = {11, 8};
  CHECK(refused(point));
  point.points = {11, 7, 0};
  CHECK(refused(point));
  point.points = {11, 7};
  CHECK(!refused(point));
  Selection empty;
  empty.region = {AxisSlice{5, 5, 1}, AxisSlice{0, 8, 1}};
  CHECK(selection_shape(shape, empty) == (std::vector<int64_t>{0, 8}));
}

}  // namespace

int main(int argc, char** argv) { return check::run_all(argc, argv); }
