// Batched TT inner products <q, c_j> of one query against many device-resident candidates.
// A team of threads (one warp for small ranks, a whole block for larger ones) contracts one
// candidate at a time: M_k = sum_i Q_k[:, i, :]^T M_{k-1} C_k[:, i, :], from M_0 = [1], with M, the
// intermediate T = M C_k[:, i, :] and the next M in shared memory; candidates' cores are read in
// place (float32 or float64), arithmetic is float64. CPU twin: dot_ref (host_ops.cpp).
#include <algorithm>

#include "cuda_raii.hpp"
#include "kernels.hpp"

namespace tts::cuda::detail {
namespace {

template <int TEAM>
__device__ inline void team_sync() {
  if constexpr (TEAM == 32) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// Shared memory per team: 3 * max_q * max_c doubles (M, T, next M).
template <int TEAM>
__global__ void dot_batch_kernel(const int32_t* modes, int d, const double* q_cores, const int64_t* q_offsets,
                                 const int32_t* q_ranks, const CandidateDesc* cands, int64_t n, int max_q, int max_c,
                                 double* dots) {
  extern __shared__ double smem[];
  const int teams = blockDim.x / TEAM;
  const int team = threadIdx.x / TEAM, t = threadIdx.x % TEAM;
  const int area = max_q * max_c;
  double* M = smem + static_cast<int64_t>(team) * 3 * area;
  double* T = M + area;
  double* Mn = T + area;
  // Every thread of a block runs the same number of iterations (barriers stay uniform when TEAM is
  // the whole block); a team past the end works on a dummy index and writes nothing.
  const int64_t stride = int64_t{gridDim.x} * teams;
  const int64_t rounds = (n + stride - 1) / stride;
  for (int64_t round = 0; round < rounds; ++round) {
    const int64_t j = round * stride + int64_t{blockIdx.x} * teams + team;
    const bool live = j < n;
    const CandidateDesc c = live ? cands[j] : CandidateDesc{nullptr, 0, 0};
    const int32_t* cr = static_cast<const int32_t*>(c.block);  // ranks header (only read when live)
    const unsigned char* cores = static_cast<const unsigned char*>(c.block) + train_header_bytes(d);
    if (t == 0) M[0] = 1.0;
    team_sync<TEAM>();
    int64_t co = 0;
    for (int k = 0; k < d; ++k) {
      const int nk = modes[k];
      const int a0 = q_ranks[k], a1 = q_ranks[k + 1];
      const int b0 = live ? cr[k] : 1, b1 = live ? cr[k + 1] : 1;
      const double* Q = q_cores + q_offsets[k];
      for (int idx = t; idx < a1 * b1; idx += TEAM) Mn[idx] = 0.0;
      for (int i = 0; i < nk; ++i) {
        // T[x][y] = sum_b M[x][b] C[b, i, y]
        for (int idx = t; idx < a0 * b1; idx += TEAM) {
          const int x = idx / b1, y = idx % b1;
          double s = 0;
          if (live) {
            if (c.f32) {
              const float* C = reinterpret_cast<const float*>(cores) + co;
              for (int b = 0; b < b0; ++b) s += M[x * b0 + b] * static_cast<double>(C[(b * nk + i) * b1 + y]);
            } else {
              const double* C = reinterpret_cast<const double*>(cores) + co;
              for (int b = 0; b < b0; ++b) s += M[x * b0 + b] * C[(b * nk + i) * b1 + y];
            }
          }
          T[idx] = s;
        }
        team_sync<TEAM>();
        // Mn[x][y] += sum_a Q[a, i, x] T[a][y]
        for (int idx = t; idx < a1 * b1; idx += TEAM) {
          const int x = idx / b1, y = idx % b1;
          double s = 0;
          for (int a = 0; a < a0; ++a) s += Q[(a * nk + i) * a1 + x] * T[a * b1 + y];
          Mn[idx] += s;
        }
        team_sync<TEAM>();
      }
      double* tmp = M;
      M = Mn;
      Mn = tmp;
      co += static_cast<int64_t>(b0) * nk * b1;
      team_sync<TEAM>();
    }
    if (live && t == 0) dots[j] = M[0];
    team_sync<TEAM>();
    if (M != smem + static_cast<int64_t>(team) * 3 * area) {  // keep M at the team's first slot
      Mn = M;
      M = smem + static_cast<int64_t>(team) * 3 * area;
      T = M + area;
    }
  }
}

}  // namespace

void launch_dot_batch(const int32_t* modes, int d, const double* q_cores, const int64_t* q_offsets,
                      const int32_t* q_ranks, const CandidateDesc* cands, int64_t n, int max_q, int max_c, double* dots,
                      cudaStream_t stream) {
  if (n <= 0) return;
  const std::size_t per_team = sizeof(double) * 3 * static_cast<std::size_t>(max_q) * max_c;
  if (max_q <= 16 && max_c <= 16) {
    constexpr int kTeams = 4;
    const int grid = static_cast<int>(std::min<int64_t>((n + kTeams - 1) / kTeams, 65535));
    dot_batch_kernel<32><<<grid, 32 * kTeams, per_team * kTeams, stream>>>(modes, d, q_cores, q_offsets, q_ranks, cands,
                                                                           n, max_q, max_c, dots);
  } else {
    const std::size_t bytes = per_team;
    if (bytes > 48 * 1024) {
      TTS_CUDA(cudaFuncSetAttribute(dot_batch_kernel<128>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
    }
    const int grid = static_cast<int>(std::min<int64_t>(n, 65535));
    dot_batch_kernel<128>
        <<<grid, 128, bytes, stream>>>(modes, d, q_cores, q_offsets, q_ranks, cands, n, max_q, max_c, dots);
  }
  TTS_CUDA(cudaGetLastError());
}

}  // namespace tts::cuda::detail
