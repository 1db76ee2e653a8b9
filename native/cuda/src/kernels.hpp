// Private: launchers of the CUDA kernels (defined in the .cu files), callable from plain C++.
// Every launcher enqueues on `stream` and checks the launch; results that come back to the host are
// copied into host memory the caller owns, after a stream synchronisation. Each kernel's CPU twin
// is named in its comment (sweep.hpp / host_ops.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda_raii.hpp"
#include "select.hpp"
#include "ttstore/types.hpp"

namespace tts::cuda::detail {

// ---- QTT-SVD steps (kernels_svd.cu) ------------------------------------------------------------
// Buffers the sweep's launchers reuse from step to step: a cudaMalloc and cudaFree per launch cost
// more than a late step's kernels, and every cudaFree waits for the whole device.
struct Scratch {
  DeviceBuffer<double> partial, small;
  std::vector<double> host;
  static double* at_least(DeviceBuffer<double>& b, int64_t n) {
    if (b.size() < n) b.reset(n);
    return b.get();
  }
  double* host_at_least(int64_t n) {
    if (static_cast<int64_t>(host.size()) < n) host.resize(static_cast<std::size_t>(n));
    return host.data();
  }
};
// W[h*n_lo + j] = src[hi[h] + lo[j]] as float64 (src of `dtype`, device); returns the sum of squares
// (twin: HostOps::load). Block partial sums are added on the host in a fixed order.
double launch_load(const void* src, DType dtype, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                   double* W, Scratch& scratch, cudaStream_t stream);
// Smallest offset hi[h] + lo[j] whose value is not finite, or -1.
int64_t launch_first_bad(const void* src, DType dtype, const int64_t* hi, const int64_t* lo, int64_t n_hi, int64_t n_lo,
                         cudaStream_t stream);
double launch_max_abs(const double* W, int64_t n, Scratch& scratch, cudaStream_t stream);
void launch_scale(double* W, int64_t n, double f, cudaStream_t stream);
// G = C C^T (m x m, full, host), C = m x K row-major on the device, float64 (twin: gram_ref).
void launch_gram(const double* C, int64_t m, int64_t K, double* G_host, Scratch& scratch, cudaStream_t stream);
// out = Ut C (r x K), Ut r x m on the host; energy (host, r entries, may be null) = squared row norms
// (twin: project_ref). `out` must not overlap C.
void launch_project(const double* C, int64_t m, int64_t K, const double* Ut_host, int64_t r, double* out,
                    double* energy_host, Scratch& scratch, cudaStream_t stream);

// ---- fused reconstruction and fingerprint (kernels_reconstruct.cu) ----------------------------
// y = L R (L nL x rp, R rp x nR, device), cast to dtype, stored at out[hi[i] + lo[j]] (out may be
// null) and compared with ref at the same offset (ref may be null). Returns {err_sq, ref_sq,
// max_abs} (twin: reconstruct_ref).
struct DeviceSums {
  double err_sq = 0, ref_sq = 0, max_abs = 0;
};
DeviceSums launch_reconstruct(const double* L, const double* R, int64_t nL, int64_t nR, int64_t rp, const int64_t* hi,
                              const int64_t* lo, DType dtype, void* out, const void* ref, cudaStream_t stream);

// ---- batched TT inner products (kernels_dot.cu) ------------------------------------------------
// A resident train is one device block: its d + 1 ranks (int32), padded to 8 bytes, then its cores
// back to back (float32 or float64), so a batch passes one pointer per candidate.
TTS_HOST_DEVICE inline int64_t train_header_bytes(int d) { return ((int64_t{d} + 1) * 4 + 7) / 8 * 8; }
struct CandidateDesc {
  const void* block;
  int32_t f32;
  int32_t pad;
};
// dots[j] = <q, c_j> (twin: dot_ref). modes (d, int32), q_cores (float64) with q_offsets (d, int64)
// and q_ranks (d + 1, int32); candidates as blocks above; all on the device. max_q / max_c bound the
// ranks (<= 64). dots is a device array of n doubles.
void launch_dot_batch(const int32_t* modes, int d, const double* q_cores, const int64_t* q_offsets,
                      const int32_t* q_ranks, const CandidateDesc* cands, int64_t n, int max_q, int max_c, double* dots,
                      cudaStream_t stream);

// ---- selections (kernels_select.cu; the plan and its twin in select.hpp) -------------------------
// values[j] = output o0 + j for j < n (device array of n doubles; twin: select_ref).
void launch_select(const SelectSpec& spec, int64_t o0, int64_t n, double* values, cudaStream_t stream);

}  // namespace tts::cuda::detail
