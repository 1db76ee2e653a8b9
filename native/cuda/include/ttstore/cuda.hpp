// The CUDA backend: the same operations as the CPU core (tt.hpp, query.hpp) on an NVIDIA device,
// plus device-resident trains (GPU core placement). Plain C++: no CUDA header leaks out of here, so
// the addon includes it like any core header. Compiled only where nvcc was found (TTS_HAVE_CUDA).
//
// Only the CUDA runtime (linked statically) and the project's own kernels are used; the driver
// (libcuda) is opened by the runtime when the first call needs it, so a machine without a driver
// or a device loads this code and simply reports 0 devices. Small dense factorizations (Gram
// eigenproblems of a few hundred rows) run on the host through LAPACK.
//
// Errors: bad input throws tts::InvalidArgument (as the CPU core does); "no usable device", "not
// enough device memory" and any failure of the runtime throw tts::cuda::Unavailable with the
// runtime's message; nothing here ends the process.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ttstore/query.hpp"
#include "ttstore/selection.hpp"
#include "ttstore/tt.hpp"

namespace tts::cuda {

// No usable device, not enough device memory, or the runtime failed (message says which).
struct Unavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  int64_t total_bytes = 0;
  int major = 0, minor = 0;  // compute capability
};

// Devices the runtime can use; 0 (never an exception) when there is no driver or no device, and
// then `why` (when given) holds the runtime's reason.
int device_count(std::string* why = nullptr);
std::vector<DeviceInfo> devices();

// ---- QTT-SVD, reconstruction, fingerprint (same contracts as tts::qtt_svd / compress / reconstruct) --
// `a` is host memory. Gram reductions and projections of the wide unfoldings run on the device in
// float64; the eigenproblems of the m x m Grams on the host. Steps the Gram routes cannot take
// exactly (tolerances near the float64 floor, very tall or very wide-row unfoldings) finish on the
// host with the CPU core's factorization, so results always meet the same error bound.
TensorTrain qtt_svd(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt, int device);
CompressResult compress(const ArrayView& a, const QttLayout& layout, const SvdOptions& opt, int device);
Fingerprint reconstruct(const TensorTrain& tt, const QttLayout& layout, const MutableArrayView& out,
                        const ArrayView& ref, int device);
Fingerprint fingerprint(const TensorTrain& tt, const QttLayout& layout, const ArrayView& ref, int device);

// tts::reconstruct_selection() (the same checks, values to rounding, and casts) with each value's
// chain of core slices on the device, one warp a value, in tiles. Throws Unavailable when the
// train's ranks pass kMaxSelectRank (the caller then runs the CPU core).
void reconstruct_selection(const TensorTrain& tt, const QttLayout& layout, const Selection& s,
                           const MutableArrayView& out, int device);

// ---- device-resident trains (GPU core placement) ----------------------------------------------
struct Placement {
  bool resident_before = false;  // the id was already on that device (now most recently used)
  int64_t bytes = 0;             // device bytes its cores take
  int64_t evicted = 0;           // trains evicted to make room
};
struct ResidencyStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t budget_bytes = 0;
  int64_t evictions = 0;
};

// Per-process store of trains in device memory under int64 ids (the store's entry ids, whose data
// never changes), within one byte budget per device, least recently used first out. Thread-safe.
class Residency {
 public:
  static Residency& instance();
  void set_budget(int64_t bytes);  // applies to every device; shrinks at once
  int64_t budget() const;
  // Copies the train's cores (float32 or float64, as given) onto `device`. Throws Unavailable when
  // the device is not usable, the train alone exceeds the budget, or memory runs out even after
  // evicting everything else; InvalidArgument for a bad device index.
  Placement place(int device, int64_t id, const Operand& train);
  bool resident(int device, int64_t id) const;
  bool evict(int64_t id);  // from every device; false when it was nowhere
  void clear();
  ResidencyStats stats(int device) const;
  // <q, c_id> for each id resident on `device` whose modes equal q's and whose ranks the kernel
  // takes (<= kMaxDotRank, q too); NaN for every other id (the caller computes those on the CPU).
  std::vector<double> dots(int device, const Operand& q, const std::vector<int64_t>& ids);

 private:
  Residency();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Largest bond dimension the batched-dot kernel takes (query and candidates).
constexpr int64_t kMaxDotRank = 64;
// Largest bond dimension the selection kernel takes (reconstruct_selection).
constexpr int64_t kMaxSelectRank = 64;

// ---- measurements for bench:gpu ---------------------------------------------------------------
struct CopyBandwidth {
  double h2d_gbps = 0, d2h_gbps = 0, d2d_gbps = 0;  // GB/s (1e9 bytes), pinned host memory
};
CopyBandwidth copy_bandwidth(int device, int64_t bytes);
struct TimedSvd {
  TensorTrain tt;
  double seconds = 0;         // the decomposition alone (device-resident) or upload + decomposition
  double relative_error = 0;  // measured on the device against the input
};
// QTT-SVD of a float32 array: resident = true uploads first and times only the decomposition of the
// device copy; false times the upload too.
TimedSvd timed_qtt_svd(const float* host, const QttLayout& layout, const SvdOptions& opt, int device, bool resident);

}  // namespace tts::cuda
