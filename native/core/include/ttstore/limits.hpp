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
// 2^32 is about a tenth of a second of both cores of a 2-core host (37 GMAC/s measured in
// dgemm-bound norms on an idle one), so no stored train holds the engine for seconds, even on a
// loaded host (train_work in tt.hpp computes it from the header, before any data is read).
inline constexpr double kMaxTrainWork = 4294967296.0;  // 2^32

// Largest estimated work of one engine turn of a request whose work comes in pieces (a top-K scores
// its candidates in chunks, score_work in query.hpp, at least one candidate a chunk): no more than a
// stored train's own bound, so another tenant's engine work waits for a chunk about as long as for
// the norm of the heaviest train put_cores stores.
inline constexpr double kMaxTurnWork = kMaxTrainWork;

// Largest estimated work of engine work that runs beside heavy calls rather than behind them (the
// admission's light lane): 2^22 multiply-adds is a few milliseconds of one core, so a small put,
// serve or score of another tenant never waits for seconds of someone else's compression.
inline constexpr double kLightTurnWork = 4194304.0;  // 2^22

// A dense rebuild's work grows with the array it writes (each value is a dot product over the bond
// at the split), so it may also take this many multiply-adds per value: a QTT of the largest float32
// array (2^26 values) with ranks up to about 120 at its middle is allowed, and the GEMM stays a part
// of a dense serve's per-byte costs (cast, encoding, sending) rather than the bulk of it.
inline constexpr double kMaxRebuildWorkPerValue = 128.0;

// A selection (serve's level, region and points, ttstore/selection.hpp) may take kMaxTrainWork
// multiply-adds, or this many per value it returns when that is more: a value of a region costs about
// r^2 (the products of shared leading digits are paid once), a point about d r^2, so a region of ranks
// up to about 45 and points of ranks up to about 10 are read at any size the payload limit allows.
inline constexpr double kMaxSelectionWorkPerValue = 4096.0;

// The float64 values a selection holds at once for the products over its values' leading digits
// (2^22: 32 MiB); a larger selection is read in tiles of this many values over the largest rank.
inline constexpr int64_t kSelectionStateValues = int64_t{1} << 22;

}  // namespace tts
