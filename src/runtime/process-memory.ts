// How the service process's C allocator gives memory back to the kernel (main.ts applies it once, at
// start, through the engine's addon: glibc reads these with mallopt, not from a config file).
//
// Node reads a socket into a fresh 64 KiB malloc'd buffer per read: a 16 MiB upload takes 256 of
// them from the main heap, and they are freed together when V8 collects the chunks. With glibc's
// defaults the heap's top is then trimmed back to the kernel (brk), so the next upload page-faults
// all 4,096 of its pages again: about 10 ms of system time in a 16 MiB put's 20-25 ms upload on 2
// cores (measured with getrusage around the body's arrival). Keeping up to 64 MiB free at the heap's
// top, the heap stays mapped and an upload's reads fault a handful of pages.
//
// Setting the trim threshold turns off glibc's dynamic mmap threshold, which otherwise rises to the
// size of the largest block freed (the engine's work vectors): fixed at glibc's ceiling of 32 MiB,
// blocks below it still come from (reused) heap memory rather than a fresh mapping each time.
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
