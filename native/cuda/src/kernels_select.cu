// Selections on the device: each output value walks the chain of core slices its digits pick; a
// value that averages a block of fine cells sums their chains. Each value costs d r^2, with no state
// shared between values, so any region or list of points is one launch per tile. Up to rank
// kSelectRegsLarge one thread evaluates a value with its row vector in registers
// (select_value_regs, which the tests also run on the host); above, one warp per value keeps the
// row vector (at most kMaxSelectRank wide) in shared memory, its lanes over the next rank. CPU
// twin: select_ref (select.cpp).
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

template <int R>
__global__ void select_regs_kernel(SelectSpec s, int64_t o0, int64_t n, double* values) {
  for (int64_t j = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < n; j += int64_t{gridDim.x} * blockDim.x) {
    values[j] = select_value_regs<R>(s, s.points ? j : o0 + j);
  }
}

constexpr int kRegsThreads = 128;

template <int R>
void launch_regs(const SelectSpec& spec, int64_t o0, int64_t n, double* values, cudaStream_t stream) {
  const int64_t blocks = std::min<int64_t>((n + kRegsThreads - 1) / kRegsThreads, int64_t{1} << 20);
  select_regs_kernel<R><<<static_cast<unsigned>(blocks), kRegsThreads, 0, stream>>>(spec, o0, n, values);
}

}  // namespace

void launch_select(const SelectSpec& spec, int64_t o0, int64_t n, double* values, cudaStream_t stream) {
  if (n <= 0) return;
  if (spec.max_rank <= kSelectRegsLarge) {
    if (spec.max_rank <= kSelectRegsSmall) {
      launch_regs<kSelectRegsSmall>(spec, o0, n, values, stream);
    } else {
      launch_regs<kSelectRegsLarge>(spec, o0, n, values, stream);
    }
    TTS_CUDA(cudaGetLastError());
    return;
  }
  const int64_t blocks = std::min<int64_t>((n + kWarps - 1) / kWarps, int64_t{1} << 20);
  select_kernel<<<static_cast<unsigned>(blocks), kWarps * 32, 0, stream>>>(spec, o0, n, values);
  TTS_CUDA(cudaGetLastError());
}

}  // namespace tts::cuda::detail
