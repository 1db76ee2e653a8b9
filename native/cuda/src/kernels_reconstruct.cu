// Reconstruction fused with the fingerprint: each thread forms one value y = L[i, :] R[:, j] of the
// (left interface x right interface) product, casts it to the output dtype, stores it at its C-order
// offset and compares it with the reference there, so the dense array is written once and read
// nowhere else. CPU twin: reconstruct_ref (host_ops.cpp).
#include <algorithm>
#include <vector>

#include "cuda_raii.hpp"
#include "dtype_dev.cuh"
#include "kernels.hpp"

namespace tts::cuda::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kLChunk = 256;  // L row entries staged in shared memory at a time

__device__ inline double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

// Grid: x over column blocks of kThreads, y over rows (grid-stride). partial: 3 doubles per block.
// RMAX > 0 (rp <= RMAX): each thread keeps its column of R in registers across all its rows and
// reads the row of L through the cache (the same address for the whole block); RMAX = 0: any rp,
// L's row staged in shared memory in chunks.
template <class E, int RMAX>
__global__ void reconstruct_kernel(const double* L, const double* R, int64_t nL, int64_t nR, int64_t rp,
                                   const int64_t* hi, const int64_t* lo, void* out, const void* ref, double* partial) {
  __shared__ double Lrow[kLChunk];
  __shared__ double red[3][kThreads / 32];
  const int64_t j = blockIdx.x * int64_t{kThreads} + threadIdx.x;
  const bool in = j < nR;
  const int64_t lj = in ? lo[j] : 0;
  double e2 = 0, x2 = 0, mx = 0;
  double Rc[RMAX > 0 ? RMAX : 1];
  if constexpr (RMAX > 0) {
#pragma unroll
    for (int k = 0; k < RMAX; ++k) Rc[k] = (in && k < rp) ? R[k * nR + j] : 0.0;
  }
  for (int64_t i = blockIdx.y; i < nL; i += gridDim.y) {
    double y = 0;
    if constexpr (RMAX > 0) {
      const double* Li = L + i * rp;
#pragma unroll
      for (int k = 0; k < RMAX; ++k) {
        if (k < rp) y += __ldg(Li + k) * Rc[k];
      }
    } else {
      for (int64_t k0 = 0; k0 < rp; k0 += kLChunk) {
        const int64_t kn = rp - k0 < kLChunk ? rp - k0 : kLChunk;
        __syncthreads();
        for (int64_t k = threadIdx.x; k < kn; k += kThreads) Lrow[k] = L[i * rp + k0 + k];
        __syncthreads();
        if (in) {
          for (int64_t k = 0; k < kn; ++k) y += Lrow[k] * R[(k0 + k) * nR + j];
        }
      }
    }
    if (in) {
      const int64_t off = hi[i] + lj;
      const double yc = E::store(out, off, y);  // out null: the cast value only
      if (ref) {
        const double x = E::load(ref, off);
        const double dl = x - yc;
        e2 += dl * dl;
        x2 += x * x;
        mx = fmax(mx, fabs(dl));
      }
    }
  }
  e2 = warp_sum(e2);
  x2 = warp_sum(x2);
  mx = warp_max(mx);
  if ((threadIdx.x & 31) == 0) {
    red[0][threadIdx.x >> 5] = e2;
    red[1][threadIdx.x >> 5] = x2;
    red[2][threadIdx.x >> 5] = mx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double a = 0, b = 0, c = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      a += red[0][w];
      b += red[1][w];
      c = fmax(c, red[2][w]);
    }
    const int64_t blk = blockIdx.y * int64_t{gridDim.x} + blockIdx.x;
    partial[3 * blk] = a;
    partial[3 * blk + 1] = b;
    partial[3 * blk + 2] = c;
  }
}

}  // namespace

DeviceSums launch_reconstruct(const double* L, const double* R, int64_t nL, int64_t nR, int64_t rp, const int64_t* hi,
                              const int64_t* lo, DType dtype, void* out, const void* ref, cudaStream_t stream) {
  const int64_t gx = (nR + kThreads - 1) / kThreads;
  if (gx > 0x7fffffffLL) throw InvalidArgument("reconstruction too large for one launch");
  // Rows per launch: enough blocks to fill the device, at most 65535 (grid y limit).
  const int64_t gy = std::max<int64_t>(1, std::min<int64_t>({nL, 65535, std::max<int64_t>(1, 8192 / gx)}));
  const int64_t blocks = gx * gy;
  DeviceBuffer<double> partial(3 * blocks);
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
  dev_dispatch(dtype, [&](auto e) {
    if (rp <= 16) {
      reconstruct_kernel<decltype(e), 16>
          <<<grid, kThreads, 0, stream>>>(L, R, nL, nR, rp, hi, lo, out, ref, partial.get());
    } else {
      reconstruct_kernel<decltype(e), 0>
          <<<grid, kThreads, 0, stream>>>(L, R, nL, nR, rp, hi, lo, out, ref, partial.get());
    }
  });
  TTS_CUDA(cudaGetLastError());
  std::vector<double> h(static_cast<std::size_t>(3 * blocks));
  TTS_CUDA(cudaMemcpyAsync(h.data(), partial.get(), sizeof(double) * h.size(), cudaMemcpyDeviceToHost, stream));
  TTS_CUDA(cudaStreamSynchronize(stream));
  DeviceSums s;
  for (int64_t b = 0; b < blocks; ++b) {
    s.err_sq += h[3 * b];
    s.ref_sq += h[3 * b + 1];
    s.max_abs = std::max(s.max_abs, h[3 * b + 2]);
  }
  return s;
}

}  // namespace tts::cuda::detail
