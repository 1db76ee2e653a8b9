// put_cores bodies for the adversarial suite: pseudo-random float32 cores, and QTTs whose ranks reach
// what their modes hold, up to a cap (the heaviest the work limit allows at rank 1024 over 2^20 values).
import { encodeNpy } from '../../src/codec/npy.js';

/** A float32 core [r0, n, r1] of small pseudo-random values, as put_cores takes it. */
export function core(r0: number, n: number, r1: number, seed = 1): { data_b64: string } {
  const a = new Float32Array(r0 * n * r1);
  let s = seed;
  for (let i = 0; i < a.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    a[i] = (s / 2 ** 32 - 0.5) / Math.sqrt(r0);
  }
  return { data_b64: encodeNpy('float32', [r0, n, r1], new Uint8Array(a.buffer)).toString('base64') };
}

/** Cores of a QTT over 2^d values whose ranks grow to `rank` (2^k from the ends, capped): no rank exceeds what its modes hold. */
export function qtt(d: number, rank: number, seed: number): Array<{ data_b64: string }> {
  const ranks = [1, ...Array.from({ length: d - 1 }, (_, k) => Math.min(rank, 2 ** (k + 1), 2 ** (d - k - 1))), 1];
  return Array.from({ length: d }, (_, k) => core(ranks[k]!, 2, ranks[k + 1]!, seed + k));
}

/** A QTT of 2^20 values with ranks up to 1024: its norm takes 3.7e9 multiply-adds, near the limit. */
export const heaviest = (key: string, seed: number) => ({ key, cores: qtt(20, 1024, seed) });
