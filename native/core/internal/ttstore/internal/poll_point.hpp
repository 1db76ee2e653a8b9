// Private: cancellation points inside the library's long computations. A solver run installs its
// poll (Hooks::cancelled, which may also wait while the run is paused) on its own thread for the
// length of the run; code deep in the library (a rounding sweep, a zip-up, a MALS pair solve, a
// Green kernel's nodes) calls poll_point() between bounded pieces of work, so that a cancel or a
// pause takes effect within one piece, whatever the params, without every signature carrying a
// callback. Elsewhere (the engine's calls on libuv's threads) it does nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace tts::detail {

// Runs the current thread's poll, which may throw (sim::Cancelled) or block (a pause). Does
// nothing when none is installed or inside an OpenMP region: a hook must never block a team or
// throw across a parallel region, so a region's body is one piece.
void poll_point();

// Installs `poll` as this thread's poll until destroyed (then the one before it is back).
class PollScope {
 public:
  explicit PollScope(const std::function<void()>* poll);
  ~PollScope();
  PollScope(const PollScope&) = delete;
  PollScope& operator=(const PollScope&) = delete;

 private:
  const std::function<void()>* previous_;
};

// body(lo, hi) over [0, count) in consecutive pieces of at most `piece` (>= 1), a poll_point()
// before each: a pass over a large grid as pieces that a cancel or a pause can land between.
template <typename Body>
void in_pieces(int64_t count, int64_t piece, Body&& body) {
  for (int64_t lo = 0; lo < count; lo += piece) {
    poll_point();
    body(lo, std::min(count, lo + piece));
  }
}

// Points in a piece of a streaming pass (a few flops a point, bound by memory): 32 MiB a vector,
// tens of milliseconds a pass; grids up to 2048² stay one piece, so their passes are unchanged.
inline constexpr int64_t kPiecePoints = int64_t{1} << 22;

// Rows of `row_points` points that make a piece of about `piece_points` points (at least one row).
inline int64_t rows_per_piece(int64_t row_points, int64_t piece_points) {
  return std::max<int64_t>(1, piece_points / std::max<int64_t>(1, row_points));
}

// `count` zeros, written piece by piece: the fresh pages of a large grid's array take most of a
// second to fault in and clear.
inline std::vector<double> zeros_in_pieces(int64_t count) {
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(count));
  in_pieces(count, kPiecePoints, [&](int64_t, int64_t end) { v.resize(static_cast<std::size_t>(end)); });
  return v;
}

}  // namespace tts::detail
