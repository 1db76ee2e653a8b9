// retainFreedMemory(trimThresholdBytes, mmapThresholdBytes) -> boolean: glibc malloc's two knobs for
// handing memory back to the kernel, set for the whole process (the service calls it once, at start;
// src/process-memory.ts says why). False where the C library is not glibc, which keeps its own policy.
//
//   M_TRIM_THRESHOLD  free memory at the top of the heap kept before malloc shrinks the heap (brk);
//   M_MMAP_THRESHOLD  allocations at least this large get a mapping of their own, unmapped on free.
//
// Setting either turns off glibc's own adjustment of both, so the service sets both.
#include "args.hpp"
#include "bindings.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tts_addon {

// glibc refuses an mmap threshold above half its largest heap (32 MiB with 64-bit pointers).
inline constexpr int64_t kMaxMmapThreshold = int64_t{32} << 20;
inline constexpr int64_t kMaxTrimThreshold = int64_t{1} << 30;

Napi::Value RetainFreedMemory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int64_t trim = ToInteger(env, info[0], "trimThresholdBytes", 0, kMaxTrimThreshold);
  const int64_t mmap = ToInteger(env, info[1], "mmapThresholdBytes", 0, kMaxMmapThreshold);
#if defined(__GLIBC__)
  const bool applied =
      mallopt(M_TRIM_THRESHOLD, static_cast<int>(trim)) == 1 && mallopt(M_MMAP_THRESHOLD, static_cast<int>(mmap)) == 1;
  return Napi::Boolean::New(env, applied);
#else
  (void)trim;
  (void)mmap;
  return Napi::Boolean::New(env, false);
#endif
}

}  // namespace tts_addon
