// Private: the TT-SVD sweep of the CUDA backend, written once over an interface of heavy steps
// (SweepOps) that has two implementations: the device kernels (DeviceOps, *.cu) and their CPU twins
// (HostOps, plain loops). The twins let the driver itself be tested on any machine, and each kernel
// is checked against its twin on a machine with a device (native/cuda/tests).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ttstore/tt.hpp"

namespace tts::cuda::detail {

// One float64 working buffer W holding the current unfolding C (m x K, row-major) in W[0, m*K).
class SweepOps {
 public:
  virtual ~SweepOps() = default;
  // W[t] = input[offset(t)] as float64 in mode order; returns the sum of squares. When a value is
  // not finite, *first_bad is the smallest C-order flat index of one (else -1).
  virtual double load(int64_t* first_bad) = 0;
  virtual double max_abs(int64_t n) = 0;        // max |W[0, n)|
  virtual void scale(int64_t n, double f) = 0;  // W[0, n) *= f
  // G = C C^T, full symmetric m x m row-major on the host.
  virtual void gram(int64_t m, int64_t K, double* G) = 0;
  // W[0, r*K) = Ut C with Ut r x m row-major (host); energy (when non-null, r entries) gets the
  // squared norm of each output row.
  virtual void project(int64_t m, int64_t K, const double* Ut, int64_t r, double* energy) = 0;
  virtual void download(int64_t n, double* host) = 0;  // host[0, n) = W[0, n)
  virtual void release_work() = 0;                     // W is no longer needed
  // Fingerprint of tt against the loaded input, after the cast to the input's dtype (as
  // tts::fingerprint does).
  virtual Fingerprint fingerprint(const TensorTrain& tt) = 0;
};

struct SweepOut {
  double norm = 0;
  double discarded_sq = 0;
  bool capped = false;
  bool aborted = false;
  int device_steps = 0;  // steps whose reductions ran through the ops
  int host_steps = 0;    // steps finished on the host (TSQR route, tall or huge unfoldings)
};

// Unfoldings with more rows than this finish on the host (their Gram would be compute-bound and the
// host's TSQR is the accurate route there anyway).
constexpr int64_t kMaxOpsRows = 512;

// While the sweep keeps full rank, W still holds the loaded input and every unfolding is a reshape of
// it: one Gram of the deepest unfolding of at most this many rows gives the shallower ones as partial
// traces. A Gram of few rows costs one pass over W whatever its row count, so this saves a pass per
// full-rank step (the kernel's register blocks cover up to 22 rows).
constexpr int64_t kAheadRows = 16;

// The left-to-right TT-SVD through `ops` (load() not yet called). `a` is only read for messages
// (may have no data). abort_core_bytes > 0: stop as soon as the float32 cores would reach it.
TensorTrain sweep(SweepOps& ops, const ArrayView& a, const QttLayout& layout, const SvdOptions& opt,
                  int64_t abort_core_bytes, SweepOut& out);

// compress() of the CPU core (float32 cores when they still meet tol, measured fingerprints,
// tighter retries after a cast) over the ops. `a` gives the dtype and numel.
CompressResult compress_with(SweepOps& ops, const ArrayView& a, const QttLayout& layout, const SvdOptions& opt);

// The CPU twins: W in host memory, each step a plain loop.
std::unique_ptr<SweepOps> host_ops(const ArrayView& a, const QttLayout& layout);

// ---- CPU twins of the kernels, shared by HostOps and the parity tests ---------------------------
void gram_ref(const double* C, int64_t m, int64_t K, double* G);
void project_ref(const double* C, int64_t m, int64_t K, const double* Ut, int64_t r, double* out, double* energy);
// Fused reconstruction: y[i, j] = L[i, :] R[:, j] cast to dtype, written at out[hi[i] + lo[j]],
// compared with ref at the same offset: sums of squares (error, reference) and max |error|.
struct FusedSums {
  double err_sq = 0, ref_sq = 0, max_abs = 0;
};
FusedSums reconstruct_ref(const double* L, const double* R, int64_t nL, int64_t nR, int64_t rp, const int64_t* hi,
                          const int64_t* lo, DType dtype, void* out, const void* ref);
// <q, c> by M_k = sum_i Q_k[:, i, :]^T M_{k-1} C_k[:, i, :] (float64; c's cores f32 or f64).
double dot_ref(const std::vector<int64_t>& modes, const std::vector<int64_t>& q_ranks, const double* q_cores,
               const std::vector<int64_t>& c_ranks, const void* c_cores, bool c_f32);

// "NaN"/"Inf" message of the CPU core for a non-finite value at C-order flat index `bad`.
std::string non_finite_message(const ArrayView& a, const QttLayout& layout, int64_t bad);

}  // namespace tts::cuda::detail
