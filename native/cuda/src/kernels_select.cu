// Selections on the device: one warp per output value walks the chain of core slices its digits
// pick, the row vector (at most kMaxSelectRank wide) in shared memory, its lanes over the next
// rank; a value that averages a block of fine cells sums their chains. Each value costs d r^2, with
// no state shared between values, so any region or list of points is one launch per tile. CPU
// twin: select_ref (host_ops.cpp).
#include <algorithm>

#include "cuda_raii.hpp"
#include "kernels.hpp"

namespace tts::cuda::detail {
namespace {

constexpr int kWarps = 8;

__global__ void select_kernel(SelectSpec s, int64_t o0, int64_t n, double* values) {
  __shared__ double buf[kWarps][2][kMaxSelectRank];  // the row vector and the next one
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t expand = int64_t{1} << s.expand_bits;
  for (int64_t j = int64_t{blockIdx.x} * kWarps + warp; j < n; j += int64_t{gridDim.x} * kWarps) {
    int64_t c[kMaxSelectAxes];
    select_coarse(s, s.points ? j : o0 + j, c);
    double sum = 0;
    for (int64_t t = 0; t < expand; ++t) {
      const int64_t off = s.flat ? select_fine_offset(s, c, t) : 0;
      double* v = buf[warp][0];
      double* w = buf[warp][1];
      if (lane == 0) v[0] = 1.0;
      __syncwarp();
      for (int k = 0; k < s.d; ++k) {
        const int r0 = s.ranks[k], r1 = s.ranks[k + 1];
        const int64_t nk = s.modes[k];
        const double* G = s.cores + s.core_off[k] + select_digit(s, c, off, k) * r1;
        for (int b = lane; b < r1; b += 32) {
          double acc = 0;
          for (int a = 0; a < r0; ++a) acc += v[a] * G[a * nk * r1 + b];
          w[b] = acc;
        }
        __syncwarp();
        double* x = v;
        v = w;
        w = x;
      }
      sum += v[0];
      __syncwarp();
    }
    if (lane == 0) values[j] = sum / static_cast<double>(expand);
  }
}

}  // namespace

void launch_select(const SelectSpec& spec, int64_t o0, int64_t n, double* values, cudaStream_t stream) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>((n + kWarps - 1) / kWarps, int64_t{1} << 20);
  select_kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(spec, o0, n, values);
  TTS_CUDA(cudaGetLastError());
}

}  // namespace tts::cuda::detail
