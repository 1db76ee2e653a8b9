// QTT layouts: how the digits of the array's axes map to TT modes (CONTRACT.md section 3).
#include "ttstore/layout.hpp"

#include <cmath>
#include <limits>

namespace tts {

LayoutKind layout_from_name(const std::string& name) {
  if (name == "row_major") return LayoutKind::RowMajor;
  if (name == "interleaved") return LayoutKind::Interleaved;
  throw InvalidArgument("unknown layout '" + name + "' (expected row_major or interleaved)");
}

const char* layout_name(LayoutKind k) { return k == LayoutKind::Interleaved ? "interleaved" : "row_major"; }

LayoutKind default_layout(const std::vector<int64_t>& /*shape*/) {
  // C order: what an uncompressed entry is held in; compressed ones choose per array.
  return LayoutKind::RowMajor;
}

int64_t QttLayout::numel() const {
  int64_t p = 1;
  for (int64_t n : shape) p *= n;
  return p;
}

QttLayout make_layout(const std::vector<int64_t>& shape, LayoutKind kind) {
  if (shape.size() > 8) {
    throw InvalidArgument("arrays have at most 8 axes, got " + std::to_string(shape.size()));
  }
  const int na = static_cast<int>(shape.size());
  std::vector<int64_t> cstride(na, 1), odd(na, 1);
  std::vector<int> bits(na, 0);
  int64_t numel = 1;
  for (int j = na - 1; j >= 0; --j) {
    const int64_t n = shape[j];
    if (n < 1) {
      throw InvalidArgument("axis " + std::to_string(j) + " has size " + std::to_string(n) +
                            "; every size must be >= 1");
    }
    cstride[j] = numel;
    if (numel > std::numeric_limits<int64_t>::max() / n) {
      throw InvalidArgument("shape has more than 2^63 elements");
    }
    numel *= n;
    int64_t m = n;
    while ((m & 1) == 0) {
      m >>= 1;
      ++bits[j];
    }
    odd[j] = m;
  }

  QttLayout L;
  L.kind = kind;
  L.shape = shape;
  auto add = [&](int64_t mode, int64_t weight) {
    L.modes.push_back(mode);
    L.weights.push_back(weight);
  };
  // The m-digit of axis j moves the index by 2^a_j; bit b (value 2^b) by 2^b.
  auto digit_weight = [&](int j) { return (int64_t{1} << bits[j]) * cstride[j]; };
  auto bit_weight = [&](int j, int level) {  // level 1 = most significant bit
    return (int64_t{1} << (bits[j] - level)) * cstride[j];
  };
  if (kind == LayoutKind::RowMajor) {
    for (int j = 0; j < na; ++j) {
      if (odd[j] > 1) add(odd[j], digit_weight(j));
      for (int l = 1; l <= bits[j]; ++l) add(2, bit_weight(j, l));
    }
  } else {
    int max_bits = 0;
    for (int j = 0; j < na; ++j) {
      if (odd[j] > 1) add(odd[j], digit_weight(j));
      if (bits[j] > max_bits) max_bits = bits[j];
    }
    for (int l = 1; l <= max_bits; ++l) {
      for (int j = 0; j < na; ++j) {
        if (bits[j] >= l) add(2, bit_weight(j, l));
      }
    }
  }
  // A single element (0-D or all-ones shape) has no digits; a TT needs at least one core, so it
  // gets one mode of size 1 (weight 0): modes = [1], one 1x1x1 core.
  if (L.modes.empty()) add(1, 0);
  return L;
}

QttLayout row_major_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& modes) {
  QttLayout L = make_layout(shape, LayoutKind::RowMajor);
  if (modes == L.modes) return L;
  if (modes.empty()) throw InvalidArgument("a row_major layout needs at least one mode");
  L.modes = modes;
  L.weights.assign(modes.size(), 0);
  int64_t stride = 1;
  bool over = false;  // the product passed the shape's size (reported below)
  for (int k = static_cast<int>(modes.size()) - 1; k >= 0 && !over; --k) {
    if (modes[k] < 1) {
      throw InvalidArgument("mode " + std::to_string(k) + " has size " + std::to_string(modes[k]) +
                            "; sizes must be >= 1");
    }
    L.weights[k] = stride;
    over = stride > L.numel() / modes[k];
    stride *= over ? 1 : modes[k];
  }
  if (over || stride != L.numel()) {
    std::string ms;
    for (int64_t m : modes) ms += (ms.empty() ? "" : ",") + std::to_string(m);
    throw InvalidArgument("the mode sizes [" + ms + "] do not multiply to the shape's " + std::to_string(L.numel()) +
                          " elements");
  }
  return L;
}

namespace {
// Offsets of every mode multi-index over modes [k0, k1), row-major over those modes.
std::vector<int64_t> offset_table(const QttLayout& L, int k0, int k1) {
  std::vector<int64_t> t{0};
  for (int k = k0; k < k1; ++k) {
    const int64_t n = L.modes[k], w = L.weights[k];
    std::vector<int64_t> next(t.size() * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < t.size(); ++i) {
      for (int64_t digit = 0; digit < n; ++digit) next[i * n + digit] = t[i] + digit * w;
    }
    t.swap(next);
  }
  return t;
}
}  // namespace

OffsetTables offsets_split_at(const QttLayout& layout, int split) {
  const int d = static_cast<int>(layout.modes.size());
  if (split < 0 || split > d) {
    throw InvalidArgument("offset split " + std::to_string(split) + " outside [0, " + std::to_string(d) + "]");
  }
  OffsetTables T;
  T.split = split;
  T.hi = offset_table(layout, 0, split);
  T.lo = offset_table(layout, split, d);
  T.n_hi = static_cast<int64_t>(T.hi.size());
  T.n_lo = static_cast<int64_t>(T.lo.size());
  return T;
}

OffsetTables offsets_split(const QttLayout& layout) {
  const int d = static_cast<int>(layout.modes.size());
  const double half = 0.5 * std::log2(static_cast<double>(layout.numel()));
  int best = 0;
  double best_gap = std::numeric_limits<double>::infinity(), lg = 0;
  for (int s = 0; s <= d; ++s) {
    const double gap = std::fabs(lg - half);
    if (gap < best_gap) {
      best_gap = gap;
      best = s;
    }
    if (s < d) lg += std::log2(static_cast<double>(layout.modes[s]));
  }
  return offsets_split_at(layout, best);
}

}  // namespace tts
