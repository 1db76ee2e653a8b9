// The bounds on the trains the service stores and computes with, written once: the addon hands them
// to the TypeScript side (src/engine/limits.ts), which checks requests against them before any work.
#pragma once

#include <cstdint>

namespace tts {

// Largest bond dimension of a stored train, and the largest rank cap a request may ask for
// (CONTRACT.md: max_rank 1..4096; put_cores ranks at most this).
inline constexpr int64_t kMaxRank = 4096;

// Largest work, in multiply-adds, of one engine call on a train that put_cores stores: its norm (the
// self contraction), a dense rebuild, and bringing it into the engine's mode split for queries.
// 2^33 is about a quarter of a second of both cores of a 2-core host (37 GMAC/s measured in
// dgemm-bound norms on an idle one), so no stored train holds the engine for seconds, even on a
// loaded host (train_work in tt.hpp computes it from the header, before any data is read).
inline constexpr double kMaxTrainWork = 8589934592.0;  // 2^33

}  // namespace tts
