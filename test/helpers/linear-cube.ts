// The put_cores body of a field far over any payload limit: f(i, j, k) = i + 2j + 3k on a
// 4096 x 4096 x 4096 grid (256 GiB dense as float32) as a row_major train of rank 2, 36 cores of
// mode size 2, each digit's core [[1, c digit], [0, 1]] (the first its top row, the last its right column).
import { encodeNpy } from '../../src/codec/npy.js';

export const CUBE_SHAPE = [4096, 4096, 4096];

export function cubeValue(i: number, j: number, k: number): number {
  return i + 2 * j + 3 * k;
}

/** The cores as put_cores takes them (float32 .npy, base64). */
export function linearCubeCores(): Array<{ data_b64: string }> {
  const d = 36;
  return Array.from({ length: d }, (_, k) => {
    const c = (Math.floor(k / 12) + 1) * 2 ** (11 - (k % 12));
    const [r0, r1] = [k === 0 ? 1 : 2, k === d - 1 ? 1 : 2];
    const core = new Float32Array(r0 * 2 * r1);
    const at = (a: number, digit: number, b: number) => (a * 2 + digit) * r1 + b;
    for (const digit of [0, 1]) {
      if (k === 0) {
        core[at(0, digit, 0)] = 1;
        core[at(0, digit, 1)] = c * digit;
      } else if (k === d - 1) {
        core[at(0, digit, 0)] = c * digit;
        core[at(1, digit, 0)] = 1;
      } else {
        core[at(0, digit, 0)] = 1;
        core[at(0, digit, 1)] = c * digit;
        core[at(1, digit, 1)] = 1;
      }
    }
    const npy = encodeNpy('float32', [r0, 2, r1], new Uint8Array(core.buffer));
    return { data_b64: Buffer.from(npy.buffer, npy.byteOffset, npy.byteLength).toString('base64') };
  });
}
