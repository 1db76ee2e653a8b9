// Selections for the CUDA backend's tests (the twin here, the kernel on a device): random regions
// (negative steps included), coarse levels and points, over own layouts and callers' splits, each
// with the random train it reads.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "select.hpp"
#include "tt_testing.hpp"
#include "ttstore/layout.hpp"
#include "ttstore/selection.hpp"

namespace sel_cases {

struct SelectCase {
  std::string name;
  tts::TensorTrain tt;
  tts::QttLayout layout;
  tts::Selection s;
};

inline int pow2_factor(int64_t n) {
  int b = 0;
  while (n % 2 == 0 && n > 0) {
    n /= 2;
    ++b;
  }
  return b;
}

// A non-empty slice of an axis of n cells, step in [-3, 3] \ {0}, normalised as the core takes it.
inline tts::AxisSlice random_slice(int64_t n, std::mt19937_64& g) {
  const int64_t step = static_cast<int64_t>(g() % 3) + 1;
  const int64_t start = static_cast<int64_t>(g() % n);
  if (g() % 2 == 0) return {start, start + 1 + static_cast<int64_t>(g() % (n - start)), step};
  return {start, start - 1 - static_cast<int64_t>(g() % (start + 1)), -step};
}

// Ranks `rank` inside (1 at the ends), capped by what the modes allow from either end.
inline tts::TensorTrain train_for(const tts::QttLayout& L, int64_t rank, uint64_t seed) {
  const std::size_t d = L.modes.size();
  std::vector<int64_t> ranks(d + 1, rank);
  ranks.front() = ranks.back() = 1;
  double left = 1;
  for (std::size_t k = 1; k < d; ++k) {
    left *= static_cast<double>(L.modes[k - 1]);
    ranks[k] = std::min<int64_t>(ranks[k], static_cast<int64_t>(std::min(left, 1e9)));
  }
  double right = 1;
  for (std::size_t k = d - 1; k >= 1; --k) {
    right *= static_cast<double>(L.modes[k]);
    ranks[k] = std::min<int64_t>(ranks[k], static_cast<int64_t>(std::min(right, 1e9)));
  }
  return ttt::random_tt(L.modes, ranks, seed);
}

// max |got - want| over max |want|: the tests bound errors relative to a selection's largest value.
inline double max_rel_diff(const std::vector<double>& got, const std::vector<double>& want) {
  double scale = 1e-300, err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    err = std::max(err, std::fabs(got[i] - want[i]));
  }
  return err / scale;
}

// The values of a case by the kernel's CPU twin (select_ref over the plan's arrays).
inline std::vector<double> twin_values(const SelectCase& c) {
  const tts::detail::SelectionPlan plan = tts::detail::plan_selection(c.tt, c.layout, c.s);
  const tts::cuda::detail::SelectArrays A = tts::cuda::detail::select_arrays(plan, c.s);
  int64_t n = 1;
  for (int64_t x : plan.out_shape) n *= x;
  std::vector<double> v(static_cast<std::size_t>(n));
  tts::cuda::detail::select_ref(A.spec, n, v.data());
  return v;
}

inline std::vector<SelectCase> select_cases() {
  struct Shape {
    std::vector<int64_t> shape;
    tts::LayoutKind kind;
    std::vector<int64_t> modes;  // empty: the layout's own; else a row_major split of the caller's
    int64_t rank;
  };
  const std::vector<Shape> shapes = {
      {{64}, tts::LayoutKind::RowMajor, {}, 3},
      {{45}, tts::LayoutKind::RowMajor, {}, 4},
      {{12, 20}, tts::LayoutKind::Interleaved, {}, 5},
      {{64, 64}, tts::LayoutKind::RowMajor, {}, 40},  // ranks over one warp's width
      {{32, 128}, tts::LayoutKind::Interleaved, {}, 64},
      {{8, 4, 16}, tts::LayoutKind::RowMajor, {}, 6},
      {{6, 5, 8}, tts::LayoutKind::Interleaved, {}, 3},
      {{4, 8, 2, 4}, tts::LayoutKind::RowMajor, {}, 7},
      {{16, 32}, tts::LayoutKind::RowMajor, {8, 64}, 5},
      {{12, 20}, tts::LayoutKind::RowMajor, {3, 80}, 3},
      {{4, 8, 2, 4}, tts::LayoutKind::RowMajor, {2, 2, 2, 2, 2, 2, 2, 2}, 4},
  };
  std::vector<SelectCase> out;
  uint64_t seed = 1;
  for (const Shape& sh : shapes) {
    const tts::QttLayout L =
        sh.modes.empty() ? tts::make_layout(sh.shape, sh.kind) : tts::row_major_layout(sh.shape, sh.modes);
    const tts::TensorTrain tt = train_for(L, sh.rank, seed);
    std::mt19937_64 g(seed * 7919 + 1);
    const int na = static_cast<int>(sh.shape.size());
    std::string name = "shape [";
    for (auto n : sh.shape) name += std::to_string(n) + ",";
    name += std::string("] ") + tts::layout_name(sh.kind) + (sh.modes.empty() ? "" : " (caller's split)") + " rank " +
            std::to_string(sh.rank);
    for (int trial = 0; trial < 6; ++trial) {
      tts::Selection s;
      s.level.assign(na, 0);
      if (trial % 3 != 0) {
        for (int a = 0; a < na; ++a) s.level[a] = static_cast<int>(g() % (pow2_factor(sh.shape[a]) + 1));
      }
      const std::vector<int64_t> coarse = tts::coarse_shape(sh.shape, s);
      if (trial % 2 == 0) {
        for (int a = 0; a < na; ++a) s.region.push_back(random_slice(coarse[a], g));
      } else {
        s.by_points = true;
        const int64_t np = 1 + static_cast<int64_t>(g() % 300);
        for (int64_t p = 0; p < np; ++p) {
          for (int a = 0; a < na; ++a) s.points.push_back(static_cast<int64_t>(g() % coarse[a]));
        }
      }
      out.push_back({name + (s.by_points ? " points" : " region") + ", trial " + std::to_string(trial), tt, L, s});
    }
    ++seed;
  }
  return out;
}

}  // namespace sel_cases
