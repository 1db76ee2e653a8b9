// Backend selection and dispatch (backend.hpp). The only file of the addon that knows whether the
// CUDA backend was compiled in.
#include "backend.hpp"

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>

#ifdef TTS_HAVE_CUDA
#include "ttstore/cuda.hpp"
#endif

namespace tts_addon {
namespace {
std::atomic<BackendKind> g_backend{BackendKind::Cpu};
// Below this many elements a device round trip (stream, allocations, copies: ~0.1 ms) costs more
// than the CPU takes for the whole array.
constexpr int64_t kGpuMinElements = int64_t{1} << 16;
// Selections pay the round trip per call too, and the CPU core evaluates a few thousand chains in
// about that time (it shares their common prefixes; the kernel evaluates each value on its own).
constexpr int64_t kGpuMinSelectValues = int64_t{1} << 12;
// Which selections the device evaluates: lists of points, from kGpuMinSelectValues up. A region or
// a coarse level (any size) stays on the CPU core, whose contraction of restricted cores shares
// every common prefix and was as fast as the kernel or faster on an H200 (docs/performance.md).
bool SelectionOnDevice(const tts::Selection& s, int64_t values) { return s.by_points && values >= kGpuMinSelectValues; }
}  // namespace

bool CudaCompiled() {
#ifdef TTS_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int CudaDeviceCount(std::string* why) {
#ifdef TTS_HAVE_CUDA
  return tts::cuda::device_count(why);
#else
  if (why) *why = "this build has no CUDA backend";
  return 0;
#endif
}

BackendKind ActiveBackend() { return g_backend.load(std::memory_order_relaxed); }

const char* BackendName(BackendKind k) { return k == BackendKind::Cuda ? "cuda" : "cpu"; }

BackendKind SelectBackend(const std::string& choice) {
  if (choice != "auto" && choice != "cpu" && choice != "cuda") {
    throw tts::InvalidArgument("backend must be auto, cpu or cuda, got '" + choice + "'");
  }
  BackendKind k = BackendKind::Cpu;
  if (choice != "cpu") {
    std::string why;
    const int n = CudaDeviceCount(&why);
    if (n > 0) {
      k = BackendKind::Cuda;
    } else if (choice == "cuda") {
      throw std::runtime_error("the CUDA backend was requested but no CUDA device is usable (" + why + ")");
    }
  }
  g_backend.store(k, std::memory_order_relaxed);
  return k;
}

tts::CompressResult BackendCompress(const tts::ArrayView& a, const tts::QttLayout& layout, const tts::SvdOptions& opt,
                                    const tts::CompressOptions& more) {
#ifdef TTS_HAVE_CUDA
  if (ActiveBackend() == BackendKind::Cuda && a.numel >= kGpuMinElements) {
    try {
      return tts::cuda::compress(a, layout, opt, 0);
    } catch (const tts::cuda::Unavailable&) {
      // not enough device memory (or a lost device): this call runs on the CPU
    }
  }
#endif
  return tts::compress(a, layout, opt, more);
}

tts::Fingerprint BackendReconstruct(const tts::TensorTrain& tt, const tts::QttLayout& layout,
                                    const tts::MutableArrayView& out, const tts::ArrayView& ref) {
#ifdef TTS_HAVE_CUDA
  if (ActiveBackend() == BackendKind::Cuda && layout.numel() >= kGpuMinElements) {
    try {
      return tts::cuda::reconstruct(tt, layout, out, ref, 0);
    } catch (const tts::cuda::Unavailable&) {
    }
  }
#endif
  return out.data ? tts::reconstruct(tt, layout, out, ref) : tts::fingerprint(tt, layout, ref);
}

void BackendReconstructSelection(const tts::TensorTrain& tt, const tts::QttLayout& layout, const tts::Selection& s,
                                 const tts::MutableArrayView& out) {
#ifdef TTS_HAVE_CUDA
  if (ActiveBackend() == BackendKind::Cuda && SelectionOnDevice(s, out.numel)) {
    try {
      tts::cuda::reconstruct_selection(tt, layout, s, out, 0);
      return;
    } catch (const tts::cuda::Unavailable&) {
      // ranks over the kernel's, or no device memory: the CPU core answers
    }
  }
#endif
  tts::reconstruct_selection(tt, layout, s, out);
}

std::vector<double> BackendResidentDots(const tts::Operand& q, const std::vector<int64_t>& ids) {
  std::vector<double> dots(ids.size(), std::numeric_limits<double>::quiet_NaN());
#ifdef TTS_HAVE_CUDA
  if (ActiveBackend() != BackendKind::Cuda) return dots;
  const int n = tts::cuda::device_count();
  for (int dev = 0; dev < n; ++dev) {
    std::vector<int64_t> rest;
    std::vector<std::size_t> where;
    for (std::size_t j = 0; j < ids.size(); ++j) {
      if (std::isnan(dots[j])) {
        rest.push_back(ids[j]);
        where.push_back(j);
      }
    }
    if (rest.empty()) break;
    try {
      const std::vector<double> got = tts::cuda::Residency::instance().dots(dev, q, rest);
      for (std::size_t i = 0; i < got.size(); ++i) dots[where[i]] = got[i];
    } catch (const tts::cuda::Unavailable&) {
      // the CPU computes what the device could not
    }
  }
#else
  (void)q;
#endif
  return dots;
}

}  // namespace tts_addon
