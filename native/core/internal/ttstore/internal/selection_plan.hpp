// Private: reconstruct_selection()'s plan in a form another backend can evaluate (the CUDA backend's
// selection kernel). Each output value is the mean, over 2^expand_bits queries, of one chain of core
// slices; a query's digit at mode k is (coord[source[k]] / div[k]) % radix[k] (0 when source[k] < 0).
#pragma once

#include <cstdint>
#include <vector>

#include "ttstore/selection.hpp"

namespace tts::detail {

struct SelectionPlan {
  TensorTrain train;  // the averaging of coarse levels done in its cores (averaged modes have size 1)
  std::vector<int32_t> source;
  std::vector<int64_t> div, radix;
  // A query's coordinates: the coarse coordinate per axis, or (flat) the one fine C-order offset of
  // a cell of the value's 2^expand_bits-cell block, whose sides are 2^level[a] along axis a.
  bool flat = false;
  int expand_bits = 0;
  std::vector<int> level;
  std::vector<int64_t> shape;      // the fine grid
  std::vector<int64_t> out_shape;  // selection_shape()
};

// The checked plan of reconstruct_selection(tt, layout, s) (the same checks and exceptions).
SelectionPlan plan_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s);

}  // namespace tts::detail
