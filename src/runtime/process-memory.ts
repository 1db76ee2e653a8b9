// How the service process's C allocator gives memory back to the kernel (main.ts applies it once, at
// start, through the engine's addon: glibc reads these with mallopt, not from a config file). The
// measurements behind it: docs/performance.md.
//
// Why: Node reads a socket into fresh 64 KiB malloc'd buffers, freed together; with glibc's defaults
// the heap's top is then trimmed, and the next upload page-faults every page again. Setting the trim
// threshold also fixes the mmap threshold (glibc stops adjusting it), so blocks below it keep coming
// from reused heap memory rather than a fresh mapping each time.
import { retainFreedMemory } from '../engine/index.js';

export const MALLOC_SETTINGS = {
  /** Free bytes at the top of a heap kept for reuse instead of returned to the kernel. */
  trimThresholdBytes: 64 << 20,
  /** Allocations from this size up get a mapping of their own (glibc's largest allowed). */
  mmapThresholdBytes: 32 << 20,
} as const;

/** Apply MALLOC_SETTINGS to this process; false where the C library is not glibc. */
export function applyMallocSettings(): boolean {
  return retainFreedMemory(MALLOC_SETTINGS);
}
