// Parts of an array read from its train without the dense array: a coarse level (block averages over
// the finest power-of-two digits of each axis), then a region (a NumPy slice per axis) or a list of
// points on that coarse grid.
#pragma once

#include "ttstore/tt.hpp"

namespace tts {

// One axis of a region: a NumPy slice already normalised by the caller (start in [0, n) unless the
// slice is empty, stop in [-1, n], step != 0); its indices are start, start + step, ... short of stop.
struct AxisSlice {
  int64_t start = 0, stop = 0, step = 1;
  int64_t count() const;  // how many indices the slice takes (0 when empty)
};

// What to read. `level[a]` averages 2^level[a] consecutive cells of axis a (empty: no averaging);
// then either `region` (one slice per axis) or, when `by_points`, `points` (n_points rows of one
// coarse index per axis, row after row).
struct Selection {
  std::vector<int> level;
  std::vector<AxisSlice> region;
  std::vector<int64_t> points;
  bool by_points = false;
};

// The coarse grid of `shape` at the selection's level. Throws InvalidArgument when a level is
// negative or deeper than its axis's power-of-two factor, or the level list is of the wrong length.
std::vector<int64_t> coarse_shape(const std::vector<int64_t>& shape, const Selection& s);
// The shape of what the selection returns ([n_points] for points, the slices' counts for a region),
// after checking it: a slice or point outside the coarse grid, a zero step or a wrong number of axes
// throws InvalidArgument naming the axis (and point).
std::vector<int64_t> selection_shape(const std::vector<int64_t>& shape, const Selection& s);

// The multiply-adds of reconstruct_selection() for a train of these modes and ranks over `layout`
// (an upper bound, from the header and the selection's sizes alone; selection_shape's checks first).
double selection_work(const std::vector<int64_t>& modes, const std::vector<int64_t>& ranks, const QttLayout& layout,
                      const Selection& s);
// What select_dense() reads: the values it returns times the cells each one averages.
double dense_selection_work(const std::vector<int64_t>& shape, const Selection& s);

// The selected values of the train, C order over selection_shape, cast to out.dtype as reconstruct()
// casts. Works on the cores: the values share the products of their common leading digits, so a
// region costs about its size times r^2 and a point about d r^2, never the array's size; memory is
// bounded by kSelectionStateValues (ttstore/limits.hpp) whatever the selection's size.
void reconstruct_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s,
                           const MutableArrayView& out);

// The same selection of a dense C-order array of `shape` (an entry stored as it came).
void select_dense(const ArrayView& a, const std::vector<int64_t>& shape, const Selection& s,
                  const MutableArrayView& out);

}  // namespace tts
