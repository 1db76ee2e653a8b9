// Independent dense references for the core's tests: plain loops only, no BLAS, no offset tables.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ttstore/tt.hpp"

namespace ttt {

using tts::TensorTrain;

// C-order offset of every mode-order index t, decoded digit by digit from CONTRACT.md section 3's
// wording (not from QttLayout::weights).
inline std::vector<int64_t> brute_offsets(const std::vector<int64_t>& shape, tts::LayoutKind kind) {
  struct Mode {
    int axis;
    int level;  // 0: the odd digit; l >= 1: bit l from the most significant
    int64_t size;
  };
  const int na = static_cast<int>(shape.size());
  std::vector<int64_t> odd(na);
  std::vector<int> bits(na, 0);
  for (int j = 0; j < na; ++j) {
    int64_t m = shape[j];
    while (m % 2 == 0) {
      m /= 2;
      ++bits[j];
    }
    odd[j] = m;
  }
  std::vector<Mode> modes;
  if (kind == tts::LayoutKind::RowMajor) {
    for (int j = 0; j < na; ++j) {
      if (odd[j] > 1) modes.push_back({j, 0, odd[j]});
      for (int l = 1; l <= bits[j]; ++l) modes.push_back({j, l, 2});
    }
  } else {
    int maxb = 0;
    for (int j = 0; j < na; ++j) {
      if (odd[j] > 1) modes.push_back({j, 0, odd[j]});
      maxb = std::max(maxb, bits[j]);
    }
    for (int l = 1; l <= maxb; ++l) {
      for (int j = 0; j < na; ++j) {
        if (bits[j] >= l) modes.push_back({j, l, 2});
      }
    }
  }
  int64_t N = 1;
  for (auto n : shape) N *= n;
  std::vector<int64_t> out(static_cast<std::size_t>(N));
  for (int64_t t = 0; t < N; ++t) {
    std::vector<int64_t> idx(na, 0);
    int64_t rest = t;
    for (int k = static_cast<int>(modes.size()) - 1; k >= 0; --k) {
      const int64_t digit = rest % modes[k].size;
      rest /= modes[k].size;
      const Mode& md = modes[k];
      idx[md.axis] +=
          md.level == 0 ? digit * (int64_t{1} << bits[md.axis]) : digit * (int64_t{1} << (bits[md.axis] - md.level));
    }
    int64_t off = 0;
    for (int j = 0; j < na; ++j) off = off * shape[j] + idx[j];
    out[t] = off;
  }
  return out;
}

// Element (i_1..i_d) of the train as a product of core slices, for every mode-order index.
inline std::vector<double> dense_mode_order(const TensorTrain& tt) {
  const int d = tt.d();
  int64_t N = 1;
  for (auto n : tt.modes) N *= n;
  std::vector<double> out(static_cast<std::size_t>(N));
  std::vector<int64_t> digit(d);
  for (int64_t t = 0; t < N; ++t) {
    int64_t rest = t;
    for (int k = d - 1; k >= 0; --k) {
      digit[k] = rest % tt.modes[k];
      rest /= tt.modes[k];
    }
    std::vector<double> v{1.0};
    for (int k = 0; k < d; ++k) {
      const int64_t r0 = tt.ranks[k], n = tt.modes[k], r1 = tt.ranks[k + 1];
      std::vector<double> w(static_cast<std::size_t>(r1), 0.0);
      for (int64_t a = 0; a < r0; ++a) {
        for (int64_t b = 0; b < r1; ++b) w[b] += v[a] * tt.cores[k][(a * n + digit[k]) * r1 + b];
      }
      v.swap(w);
    }
    out[t] = v[0];
  }
  return out;
}

// The train as a C-order float64 array (small sizes only).
inline std::vector<double> dense_c_order(const TensorTrain& tt, const std::vector<int64_t>& shape,
                                         tts::LayoutKind kind) {
  const auto off = brute_offsets(shape, kind);
  const auto m = dense_mode_order(tt);
  std::vector<double> out(m.size());
  for (std::size_t t = 0; t < m.size(); ++t) out[off[t]] = m[t];
  return out;
}

inline double norm2(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v * v;
  return std::sqrt(s);
}

inline double diff_norm(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(s);
}

inline double max_abs_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

// Reconstruct through the library into float64 (C order).
inline std::vector<double> to_dense(const TensorTrain& tt, const tts::QttLayout& L) {
  std::vector<double> y(static_cast<std::size_t>(L.numel()));
  tts::reconstruct(tt, L, tts::MutableArrayView{y.data(), tts::DType::F64, L.numel()}, tts::ArrayView{});
  return y;
}

inline tts::ArrayView view(const std::vector<double>& x) {
  return tts::ArrayView{x.data(), tts::DType::F64, static_cast<int64_t>(x.size())};
}

inline TensorTrain random_tt(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd;
  TensorTrain t;
  t.modes = modes;
  t.ranks = ranks;
  for (std::size_t k = 0; k < modes.size(); ++k) {
    std::vector<double> c(static_cast<std::size_t>(ranks[k] * modes[k] * ranks[k + 1]));
    for (double& v : c) v = nd(g);
    t.cores.push_back(std::move(c));
  }
  return t;
}

}  // namespace ttt
