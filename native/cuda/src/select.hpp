// Private: a selection's plan as the CUDA backend evaluates it (the arrays of
// tts::detail::SelectionPlan behind plain pointers), the per-value index arithmetic shared by the
// kernel (kernels_select.cu) and its CPU twin (select_ref), and the host side that builds the arrays.
// No CUDA header: the twin and its tests compile anywhere.
#pragma once

#include <cstdint>
#include <vector>

#include "ttstore/cuda.hpp"
#include "ttstore/internal/selection_plan.hpp"

#ifdef __CUDACC__
#define TTS_HOST_DEVICE __host__ __device__
#else
#define TTS_HOST_DEVICE
#endif
#if defined(__CUDACC__) && defined(__CUDA_ARCH__)
#define TTS_UNROLL _Pragma("unroll")
#else
#define TTS_UNROLL
#endif

namespace tts::cuda::detail {

// ---- selections: points, regions and coarse levels read from the cores (kernels_select.cu) -------
// The plan of tts::detail::SelectionPlan with its arrays (device pointers for a launch, host
// pointers for the twin). Output o is the mean over its 2^expand_bits queries of the chain
// G_0[digit_0] ... G_{d-1}[digit_{d-1}], started from [1].
constexpr int kMaxSelectAxes = 32;
struct SelectSpec {
  int d = 0, na = 0, max_rank = 1;
  const int32_t* ranks = nullptr;     // d + 1
  const int64_t* modes = nullptr;     // d (averaged modes are 1)
  const int64_t* core_off = nullptr;  // d: where core k starts in `cores`
  const double* cores = nullptr;
  const int32_t* source = nullptr;  // d: the coordinate a mode's digit reads (< 0: digit 0)
  const int64_t* div = nullptr;     // d
  const int64_t* radix = nullptr;   // d
  const int32_t* shift = nullptr;   // d: log2(div) when div and radix are powers of two, else -1
  int flat = 0, expand_bits = 0;
  const int32_t* level = nullptr;  // na
  const int64_t* shape = nullptr;  // na: the fine grid
  // Points (n x na coarse indices, relative to the launch's first output), else a region:
  const int64_t* points = nullptr;
  const int64_t* start = nullptr;      // na
  const int64_t* step = nullptr;       // na
  const int64_t* out_shape = nullptr;  // na
};
// The coarse coordinates c[0, na) of output o (o counts from the launch's first for points).
TTS_HOST_DEVICE inline void select_coarse(const SelectSpec& s, int64_t o, int64_t* c) {
  if (s.points) {
    for (int a = 0; a < s.na; ++a) c[a] = s.points[o * s.na + a];
    return;
  }
  for (int a = s.na - 1; a >= 0; --a) {
    c[a] = s.start[a] + (o % s.out_shape[a]) * s.step[a];
    o /= s.out_shape[a];
  }
}
// The fine C-order offset of cell t of the block at coarse coordinates c (flat plans).
TTS_HOST_DEVICE inline int64_t select_fine_offset(const SelectSpec& s, const int64_t* c, int64_t t) {
  int64_t off = 0, mult = 1;
  for (int a = s.na - 1; a >= 0; --a) {
    off += ((c[a] << s.level[a]) + (t & ((int64_t{1} << s.level[a]) - 1))) * mult;
    t >>= s.level[a];
    mult *= s.shape[a];
  }
  return off;
}
// Mode k's digit of a query (coarse coordinates c, or the fine offset `off` of a flat plan).
TTS_HOST_DEVICE inline int64_t select_digit(const SelectSpec& s, const int64_t* c, int64_t off, int k) {
  const int src = s.source[k];
  if (src < 0) return 0;
  const int64_t x = s.flat ? off : c[src];
  if (s.shift[k] >= 0) return (x >> s.shift[k]) & (s.radix[k] - 1);
  return (x / s.div[k]) % s.radix[k];
}
// Output o (as select_coarse takes it) by one thread, its row vector in registers: R bounds the
// train's ranks. The kernel's path for small ranks (launch_select), where a warp per value would
// leave most lanes idle; the tests run this same function on the host against select_ref.
template <int R>
TTS_HOST_DEVICE inline double select_value_regs(const SelectSpec& s, int64_t o) {
  int64_t c[kMaxSelectAxes];
  select_coarse(s, o, c);
  const int64_t expand = int64_t{1} << s.expand_bits;
  double sum = 0;
  for (int64_t t = 0; t < expand; ++t) {
    const int64_t off = s.flat ? select_fine_offset(s, c, t) : 0;
    double v[R], w[R];
    TTS_UNROLL
    for (int b = 0; b < R; ++b) v[b] = b == 0 ? 1.0 : 0.0;
    for (int k = 0; k < s.d; ++k) {
      const int r0 = s.ranks[k], r1 = s.ranks[k + 1];
      const int64_t stride = s.modes[k] * r1;
      const double* G = s.cores + s.core_off[k] + select_digit(s, c, off, k) * r1;
      TTS_UNROLL
      for (int b = 0; b < R; ++b) w[b] = 0.0;
      TTS_UNROLL
      for (int a = 0; a < R; ++a) {
        if (a < r0) {
          TTS_UNROLL
          for (int b = 0; b < R; ++b) {
            if (b < r1) w[b] += v[a] * G[a * stride + b];
          }
        }
      }
      TTS_UNROLL
      for (int b = 0; b < R; ++b) v[b] = w[b];
    }
    sum += v[0];
  }
  return sum / static_cast<double>(expand);
}
// The largest ranks the one-thread-per-value path takes (its two register widths).
constexpr int kSelectRegsSmall = 8, kSelectRegsLarge = 16;

// The CPU twin of launch_select: values[o] for o in [0, n), all on the host.
void select_ref(const SelectSpec& s, int64_t n, double* values);

// The arrays of a plan, in host memory, and a spec that points into them (`points` into the
// selection's own, when it has points). Throws Unavailable when the kernel cannot take the plan
// (a rank over kMaxSelectRank, more than kMaxSelectAxes axes).
struct SelectArrays {
  std::vector<int32_t> ranks, source, shift, level;
  std::vector<int64_t> modes, core_off, div, radix, shape, start, step, out_shape;
  std::vector<double> cores;
  SelectSpec spec;  // host pointers
};
SelectArrays select_arrays(const tts::detail::SelectionPlan& plan, const Selection& s);

}  // namespace tts::cuda::detail
