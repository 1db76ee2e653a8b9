// The QTT layouts of an array (CONTRACT.md section 3): row_major or interleaved, chosen per entry
// (compress_best_layout in tt.hpp).
#pragma once

#include "ttstore/types.hpp"

namespace tts {

enum class LayoutKind : uint8_t { RowMajor, Interleaved };

LayoutKind layout_from_name(const std::string& name);  // "row_major" | "interleaved"
const char* layout_name(LayoutKind k);

// The layout of a shape before any data is seen: row_major (an entry stored uncompressed, a train
// put without one). Compressed entries get theirs from compress_best_layout.
LayoutKind default_layout(const std::vector<int64_t>& shape);

// Each axis of size n = m * 2^a (m odd) gives one mode of size m (when m > 1) and a modes of size 2.
// row_major: axis by axis, m-digit first, then bits from the most significant.
// interleaved: level 0 = the m-digits of all axes (axis order); level l = bit l (from the most
// significant) of every axis with a >= l, in axis order.
struct QttLayout {
  LayoutKind kind = LayoutKind::RowMajor;
  std::vector<int64_t> shape;  // array shape (0..8 axes); every size >= 1
  std::vector<int64_t> modes;  // n_1 .. n_d (d may be 0 for a single element)
  // weights[k]: how far one unit of mode k's digit moves in the C-order flattening of the array.
  // The array offset of mode multi-index (i_1..i_d) is sum_k i_k * weights[k]; for row_major the
  // weights are the row-major strides of `modes`.
  std::vector<int64_t> weights;
  int64_t numel() const;  // product of shape
};

// Throws InvalidArgument for more than 8 axes or a size < 1.
// A single element (0-D shape, or all axes of size 1) has no digits; since a TT needs a core, its
// layout gets one mode of size 1 (modes = [1], weights = [0]) and its train one 1x1x1 core.
QttLayout make_layout(const std::vector<int64_t>& shape, LayoutKind kind);

// A row_major layout over mode sizes the caller chose (a train put with its own split, CONTRACT.md
// section 8): the mode tensor is still the C-order flattening, only reshaped to `modes`, so any sizes
// whose product is the shape's size work. Throws InvalidArgument unless every mode is >= 1 and the
// products agree.
QttLayout row_major_layout(const std::vector<int64_t>& shape, const std::vector<int64_t>& modes);

// Array offset of every mode-order linear index in [0, numel): out[t] = offset.
// Split into two tables so callers never need an N-sized table (see offsets_split).
struct OffsetTables {
  int64_t n_hi = 1, n_lo = 1;  // n_hi * n_lo == numel
  int split = 0;               // modes [0, split) are "hi", [split, d) are "lo"
  std::vector<int64_t> hi;     // size n_hi
  std::vector<int64_t> lo;     // size n_lo
  // offset of mode-order linear index t = hi[t / n_lo] + lo[t % n_lo]
};
// Chooses the split so that n_hi, n_lo are both about sqrt(numel) (or at the given split).
OffsetTables offsets_split(const QttLayout& layout);
OffsetTables offsets_split_at(const QttLayout& layout, int split);

}  // namespace tts
