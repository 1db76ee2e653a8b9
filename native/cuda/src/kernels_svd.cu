// Kernels of the QTT-SVD sweep: load (gather + cast to float64 + sum of squares), the Gram
// reduction C C^T of a wide unfolding, and the projection U_r^T C, all in float64.
// CPU twins: HostOps::load, gram_ref, project_ref (host_ops.cpp).
#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "cuda_raii.hpp"
#include "dtype_dev.cuh"
#include "kernels.hpp"

namespace tts::cuda::detail {
namespace {

constexpr int kThreads = 256;

__device__ inline double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline double warp_max(double v) {
  for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
// Sum over the block (kThreads threads); the result is valid in thread 0.
__device__ inline double block_sum(double v, double* sh) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (kThreads / 32) ? sh[threadIdx.x] : 0.0;
  if (threadIdx.x < 32) v = warp_sum(v);
  __syncthreads();
  return v;
}
__device__ inline double block_max(double v, double* sh) {
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
  __syncthreads();
  v = threadIdx.x < (kThreads / 32) ? sh[threadIdx.x] : 0.0;
  if (threadIdx.x < 32) v = warp_max(v);
  __syncthreads();
  return v;
}

int grid_for(int64_t work, int per_block = kThreads, int cap = 4096) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(cap, (work + per_block - 1) / per_block)));
}

// Copies n partials back (after the stream's work so far) into the scratch's host buffer.
const double* partials_to_host(const double* partial, int64_t n, Scratch& scratch, cudaStream_t stream) {
  double* h = scratch.host_at_least(n);
  TTS_CUDA(cudaMemcpyAsync(h, partial, sizeof(double) * n, cudaMemcpyDeviceToHost, stream));
  TTS_CUDA(cudaStreamSynchronize(stream));
  return h;
}

// Adds the per-block partials in block order (the same order every run).
double host_sum(const double* partial, int n, Scratch& scratch, cudaStream_t stream) {
  const double* h = partials_to_host(partial, n, scratch, stream);
  double s = 0;
  for (int i = 0; i < n; ++i) s += h[i];
  return s;
}

// ---- load ---------------------------------------------------------------------------------------
template <class E>
__global__ void load_kernel(const void* src, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                            double* W, double* partial) {
  __shared__ double sh[kThreads / 32];
  double s = 0;
  for (int64_t h = blockIdx.x; h < n_hi; h += gridDim.x) {
    const int64_t base = hi[h];
    double* dst = W + h * n_lo;
    for (int64_t j = threadIdx.x; j < n_lo; j += blockDim.x) {
      const double v = E::load(src, base + lo[j]);
      dst[j] = v;
      s += v * v;
    }
  }
  s = block_sum(s, sh);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

template <class E>
__global__ void first_bad_kernel(const void* src, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                                 unsigned long long* bad) {
  for (int64_t h = blockIdx.x; h < n_hi; h += gridDim.x) {
    for (int64_t j = threadIdx.x; j < n_lo; j += blockDim.x) {
      const int64_t off = hi[h] + lo[j];
      if (!isfinite(E::load(src, off))) atomicMin(bad, static_cast<unsigned long long>(off));
    }
  }
}

__global__ void max_abs_kernel(const double* W, int64_t n, double* partial) {
  __shared__ double sh[kThreads / 32];
  double m = 0;
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < n; i += int64_t{gridDim.x} * kThreads)
    m = fmax(m, fabs(W[i]));
  m = block_max(m, sh);
  if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

__global__ void scale_kernel(double* W, int64_t n, double f) {
  for (int64_t i = blockIdx.x * int64_t{kThreads} + threadIdx.x; i < n; i += int64_t{gridDim.x} * kThreads) W[i] *= f;
}

// ---- Gram, few rows (m <= kSmallRows): 4 x 4 register blocks over column tiles -------------------
// A block stages a tile of W columns of all m rows in shared memory, the rows padded with zeros to
// mp = 4q (q = ceil(m / 4)). The upper triangle of the mp x mp Gram is nb = q(q + 1)/2 blocks of
// 4 x 4; thread t sums block t / L (L = kThreads / nb lanes) over the tile's columns lane, lane + L,
// ... in 16 registers, so a product costs half a shared-memory read (one thread per pair would cost
// two and leave most threads idle from m = 16 up). The lanes are summed at the end and
// the block writes its m(m + 1)/2 partial sums, pair (a, b) at a m - a(a - 1)/2 + b - a.
constexpr int kSmallRows = 22;        // q <= 6: nb <= 21 blocks, at least 12 lanes each
constexpr int kTileElems = 24 * 128;  // doubles of the shared tile (24 KiB)

__host__ __device__ inline int gram_tile_columns(int m) { return kTileElems / (4 * ((m + 3) / 4)); }

__global__ void gram_small_kernel(const double* C, int m, int64_t K, double* partial) {
  __shared__ double tile[kTileElems];
  __shared__ double red[kThreads];
  const int q = (m + 3) / 4, mp = 4 * q, nb = q * (q + 1) / 2;
  const int W = gram_tile_columns(m), L = kThreads / nb;
  const int blk = threadIdx.x / L, lane = threadIdx.x % L;
  const bool active = blk < nb;
  int bi = 0, bj = 0;  // this thread's block of the upper triangle, bi <= bj
  if (active) {
    int rest = blk;
    while (rest >= q - bi) {
      rest -= q - bi;
      ++bi;
    }
    bj = bi + rest;
  }
  for (int idx = m * W + threadIdx.x; idx < mp * W; idx += kThreads) tile[idx] = 0.0;  // padding rows
  double acc[4][4] = {};
  for (int64_t c0 = blockIdx.x * int64_t{W}; c0 < K; c0 += int64_t{gridDim.x} * W) {
    const int w = K - c0 < W ? static_cast<int>(K - c0) : W;
    for (int idx = threadIdx.x; idx < m * W; idx += kThreads) {
      const int row = idx / W, col = idx - row * W;
      tile[idx] = col < w ? C[row * K + c0 + col] : 0.0;
    }
    __syncthreads();
    if (active) {
      const double* A = tile + 4 * bi * W;
      const double* B = tile + 4 * bj * W;
      for (int c = lane; c < w; c += L) {
        double a[4], b[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          a[u] = A[u * W + c];
          b[u] = B[u * W + c];
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[u][v] += a[u] * b[v];
        }
      }
    }
    __syncthreads();
  }
  const int P = m * (m + 1) / 2;
#pragma unroll
  for (int e = 0; e < 16; ++e) {
    red[threadIdx.x] = active ? acc[e / 4][e % 4] : 0.0;
    __syncthreads();
    if (active && lane == 0) {
      double s = 0;
      for (int l = 0; l < L; ++l) s += red[blk * L + l];
      const int a = 4 * bi + e / 4, b = 4 * bj + e % 4;
      if (a <= b && b < m) partial[blockIdx.x * int64_t{P} + a * m - a * (a - 1) / 2 + (b - a)] = s;
    }
    __syncthreads();
  }
}

// out[p] = sum over g < grid of partial[g * P + p], in the same order every run: the per-block
// partials of a mid-sweep Gram (2048 blocks x up to 253 pairs) are megabytes, slower to copy to the
// host than to add here.
__global__ void sum_partials_kernel(const double* partial, int grid, int P, double* out) {
  __shared__ double sh[kThreads / 32];
  double s = 0;
  for (int g = threadIdx.x; g < grid; g += kThreads) s += partial[int64_t{g} * P + blockIdx.x];
  s = block_sum(s, sh);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// ---- Gram, many rows: 32 x 32 tiles of the upper triangle, split over K, atomics into G ------------
constexpr int kG = 32, kGK = 32;

__global__ void gram_tiled_kernel(const double* C, int m, int64_t K, int64_t k_per_split, double* G) {
  const int ti = blockIdx.x, tj = blockIdx.y;
  if (tj < ti) return;  // upper tiles only
  __shared__ double As[kG][kGK + 1], Bs[kG][kGK + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int i0 = ti * kG, j0 = tj * kG;
  const int64_t k_begin = blockIdx.z * k_per_split;
  const int64_t k_end = K < k_begin + k_per_split ? K : k_begin + k_per_split;
  double acc[2][2] = {{0, 0}, {0, 0}};
  for (int64_t k0 = k_begin; k0 < k_end; k0 += kGK) {
    for (int idx = threadIdx.x; idx < kG * kGK; idx += 256) {
      const int row = idx / kGK, col = idx % kGK;
      const int64_t kc = k0 + col;
      As[row][col] = (i0 + row < m && kc < k_end) ? C[(i0 + row) * K + kc] : 0.0;
      Bs[row][col] = (j0 + row < m && kc < k_end) ? C[(j0 + row) * K + kc] : 0.0;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kGK; ++kk) {
      const double a0 = As[ty][kk], a1 = As[ty + 16][kk];
      const double b0 = Bs[tx][kk], b1 = Bs[tx + 16][kk];
      acc[0][0] += a0 * b0;
      acc[0][1] += a0 * b1;
      acc[1][0] += a1 * b0;
      acc[1][1] += a1 * b1;
    }
    __syncthreads();
  }
  for (int u = 0; u < 2; ++u) {
    for (int v = 0; v < 2; ++v) {
      const int i = i0 + ty + 16 * u, j = j0 + tx + 16 * v;
      if (i < m && j < m && i <= j) atomicAdd(&G[i * m + j], acc[u][v]);
    }
  }
}

// ---- projection out = Ut C, few rows (m, r <= kSmallRows): column tiles in shared memory ----------
__global__ void project_small_kernel(const double* C, int m, int64_t K, const double* Ut, int r, double* out,
                                     double* partial_energy) {
  __shared__ double U[kSmallRows * kSmallRows];
  __shared__ double e_sh[kSmallRows * (kThreads / 32)];
  for (int idx = threadIdx.x; idx < r * m; idx += kThreads) U[idx] = Ut[idx];
  double e[kSmallRows];
#pragma unroll
  for (int i = 0; i < kSmallRows; ++i) e[i] = 0;
  __syncthreads();
  for (int64_t c0 = blockIdx.x * int64_t{kThreads}; c0 < K; c0 += int64_t{gridDim.x} * kThreads) {
    const int64_t c = c0 + threadIdx.x;
    const bool in = c < K;
    double x[kSmallRows];  // column c of C, in registers (coalesced loads across the warp)
#pragma unroll
    for (int j = 0; j < kSmallRows; ++j) x[j] = (in && j < m) ? C[j * K + c] : 0.0;
#pragma unroll
    for (int i = 0; i < kSmallRows; ++i) {
      if (i < r) {
        double s = 0;
#pragma unroll
        for (int j = 0; j < kSmallRows; ++j) {
          if (j < m) s += U[i * m + j] * x[j];
        }
        if (in) out[i * K + c] = s;
        e[i] += s * s;
      }
    }
  }
  if (partial_energy) {
#pragma unroll
    for (int i = 0; i < kSmallRows; ++i) {
      if (i < r) {
        const double v = warp_sum(e[i]);
        if ((threadIdx.x & 31) == 0) e_sh[i * (kThreads / 32) + (threadIdx.x >> 5)] = v;
      }
    }
    __syncthreads();
    if (threadIdx.x < r) {
      double t = 0;
      for (int w = 0; w < kThreads / 32; ++w) t += e_sh[threadIdx.x * (kThreads / 32) + w];
      partial_energy[blockIdx.x * int64_t{r} + threadIdx.x] = t;
    }
  }
}

// ---- projection, general sizes: 32 x 32 output tiles over the inner dimension m ------------------
__global__ void project_tiled_kernel(const double* C, int m, int64_t K, const double* Ut, int r, double* out,
                                     double* energy) {
  __shared__ double As[kG][kGK + 1], Bs[kGK][kG + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int i0 = blockIdx.y * kG;
  const int64_t c0 = blockIdx.x * int64_t{kG};
  double acc[2][2] = {{0, 0}, {0, 0}};
  for (int j0 = 0; j0 < m; j0 += kGK) {
    for (int idx = threadIdx.x; idx < kG * kGK; idx += 256) {
      const int a = idx / kGK, b = idx % kGK;  // As[row i][inner j]
      As[a][b] = (i0 + a < r && j0 + b < m) ? Ut[(i0 + a) * m + j0 + b] : 0.0;
      const int jj = idx / kG, cc = idx % kG;  // Bs[inner j][column c]
      Bs[jj][cc] = (j0 + jj < m && c0 + cc < K) ? C[(j0 + jj) * K + c0 + cc] : 0.0;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kGK; ++kk) {
      const double a0 = As[ty][kk], a1 = As[ty + 16][kk];
      const double b0 = Bs[kk][tx], b1 = Bs[kk][tx + 16];
      acc[0][0] += a0 * b0;
      acc[0][1] += a0 * b1;
      acc[1][0] += a1 * b0;
      acc[1][1] += a1 * b1;
    }
    __syncthreads();
  }
  for (int u = 0; u < 2; ++u) {
    const int i = i0 + ty + 16 * u;
    double e = 0;
    for (int v = 0; v < 2; ++v) {
      const int64_t c = c0 + tx + 16 * v;
      if (i < r && c < K) {
        out[i * K + c] = acc[u][v];
        e += acc[u][v] * acc[u][v];
      }
    }
    if (energy && i < r && e != 0) atomicAdd(&energy[i], e);
  }
}

}  // namespace

double launch_load(const void* src, DType dtype, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                   double* W, Scratch& scratch, cudaStream_t stream) {
  const int grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_hi, 4096)));
  double* partial = Scratch::at_least(scratch.partial, grid);
  dev_dispatch(dtype, [&](auto e) {
    load_kernel<decltype(e)><<<grid, kThreads, 0, stream>>>(src, hi, lo, n_hi, n_lo, W, partial);
  });
  TTS_CUDA(cudaGetLastError());
  return host_sum(partial, grid, scratch, stream);
}

int64_t launch_first_bad(const void* src, DType dtype, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                         cudaStream_t stream) {
  const int grid = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n_hi, 4096)));
  DeviceBuffer<unsigned long long> bad(1);
  const unsigned long long none = ~0ull;
  TTS_CUDA(cudaMemcpyAsync(bad.get(), &none, sizeof none, cudaMemcpyHostToDevice, stream));
  dev_dispatch(dtype, [&](auto e) {
    first_bad_kernel<decltype(e)><<<grid, kThreads, 0, stream>>>(src, hi, lo, n_hi, n_lo, bad.get());
  });
  TTS_CUDA(cudaGetLastError());
  unsigned long long h = none;
  TTS_CUDA(cudaMemcpyAsync(&h, bad.get(), sizeof h, cudaMemcpyDeviceToHost, stream));
  TTS_CUDA(cudaStreamSynchronize(stream));
  return h == none ? -1 : static_cast<int64_t>(h);
}

double launch_max_abs(const double* W, int64_t n, Scratch& scratch, cudaStream_t stream) {
  const int grid = grid_for(n);
  double* partial = Scratch::at_least(scratch.partial, grid);
  max_abs_kernel<<<grid, kThreads, 0, stream>>>(W, n, partial);
  TTS_CUDA(cudaGetLastError());
  const double* h = partials_to_host(partial, grid, scratch, stream);
  return *std::max_element(h, h + grid);
}

void launch_scale(double* W, int64_t n, double f, cudaStream_t stream) {
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(W, n, f);
  TTS_CUDA(cudaGetLastError());
}

namespace {

// The blocks of gram_small_kernel that run at once on the current device. Its grid is at most one
// such wave, each block striding over the column tiles: with more, a partial last wave leaves most
// multiprocessors idle while it runs.
int gram_small_wave() {
  static std::mutex mu;
  static std::map<int, int> waves;  // by device
  int dev = 0;
  TTS_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = waves.find(dev);
  if (it != waves.end()) return it->second;
  int sms = 0, per_sm = 0;
  TTS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  TTS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gram_small_kernel, kThreads, 0));
  return waves[dev] = std::max(1, sms * per_sm);
}

}  // namespace

void launch_gram(const double* C, int64_t m, int64_t K, double* G_host, Scratch& scratch, cudaStream_t stream) {
  if (m <= kSmallRows) {
    const int P = static_cast<int>(m * (m + 1) / 2);
    const int grid = grid_for(K, gram_tile_columns(static_cast<int>(m)), gram_small_wave());
    double* partial = Scratch::at_least(scratch.partial, int64_t{grid} * P + P);
    double* sums = partial + int64_t{grid} * P;
    gram_small_kernel<<<grid, kThreads, 0, stream>>>(C, static_cast<int>(m), K, partial);
    TTS_CUDA(cudaGetLastError());
    sum_partials_kernel<<<P, kThreads, 0, stream>>>(partial, grid, P, sums);
    TTS_CUDA(cudaGetLastError());
    const double* h = partials_to_host(sums, P, scratch, stream);
    for (int p = 0, a = 0, b = 0; p < P; ++p) {
      const double s = h[p];
      G_host[a * m + b] = G_host[b * m + a] = s;
      if (++b == m) b = ++a;
    }
    return;
  }
  const int tiles = static_cast<int>((m + kG - 1) / kG);
  // Enough K-splits to fill the device with the upper tiles, each split at least 4096 columns.
  const int64_t upper = int64_t{tiles} * (tiles + 1) / 2;
  const int64_t splits =
      std::max<int64_t>(1, std::min<int64_t>({(K + 4095) / 4096, std::max<int64_t>(1, 2048 / upper), 65535}));
  const int64_t per = (K + splits - 1) / splits;
  double* G = Scratch::at_least(scratch.partial, m * m);
  TTS_CUDA(cudaMemsetAsync(G, 0, sizeof(double) * m * m, stream));
  gram_tiled_kernel<<<dim3(tiles, tiles, static_cast<unsigned>(splits)), 256, 0, stream>>>(C, static_cast<int>(m), K,
                                                                                           per, G);
  TTS_CUDA(cudaGetLastError());
  TTS_CUDA(cudaMemcpyAsync(G_host, G, sizeof(double) * m * m, cudaMemcpyDeviceToHost, stream));
  TTS_CUDA(cudaStreamSynchronize(stream));
  for (int64_t a = 0; a < m; ++a) {
    for (int64_t b = 0; b < a; ++b) G_host[a * m + b] = G_host[b * m + a];
  }
}

void launch_project(const double* C, int64_t m, int64_t K, const double* Ut_host, int64_t r, double* out,
                    double* energy_host, Scratch& scratch, cudaStream_t stream) {
  // Ut and, after it, the energy sums share one scratch buffer; the host copy of Ut is pageable, so
  // the copy has left it when cudaMemcpyAsync returns.
  const int small_grid = grid_for(K, kThreads, 2048);
  double* Ut = Scratch::at_least(scratch.small, r * m + std::max<int64_t>(r, int64_t{small_grid} * r) + r);
  double* sums = Ut + r * m;
  TTS_CUDA(cudaMemcpyAsync(Ut, Ut_host, sizeof(double) * r * m, cudaMemcpyHostToDevice, stream));
  if (m <= kSmallRows && r <= kSmallRows) {
    const int grid = small_grid;
    project_small_kernel<<<grid, kThreads, 0, stream>>>(C, static_cast<int>(m), K, Ut, static_cast<int>(r), out,
                                                        energy_host ? sums : nullptr);
    TTS_CUDA(cudaGetLastError());
    if (energy_host) {
      double* total = sums + int64_t{grid} * r;
      sum_partials_kernel<<<static_cast<int>(r), kThreads, 0, stream>>>(sums, grid, static_cast<int>(r), total);
      TTS_CUDA(cudaGetLastError());
      const double* h = partials_to_host(total, r, scratch, stream);
      std::copy(h, h + r, energy_host);
    } else {
      TTS_CUDA(cudaStreamSynchronize(stream));  // the next step's Ut reuses the scratch
    }
    return;
  }
  double* energy = sums;
  if (energy_host) TTS_CUDA(cudaMemsetAsync(energy, 0, sizeof(double) * r, stream));
  const int64_t col_tiles = (K + kG - 1) / kG;
  const int64_t row_tiles = (r + kG - 1) / kG;
  if (col_tiles > 0x7fffffffLL || row_tiles > 65535)
    throw InvalidArgument("unfolding too large for the projection kernel");
  project_tiled_kernel<<<dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(row_tiles)), 256, 0, stream>>>(
      C, static_cast<int>(m), K, Ut, static_cast<int>(r), out, energy_host ? energy : nullptr);
  TTS_CUDA(cudaGetLastError());
  if (energy_host) TTS_CUDA(cudaMemcpyAsync(energy_host, energy, sizeof(double) * r, cudaMemcpyDeviceToHost, stream));
  TTS_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace tts::cuda::detail
