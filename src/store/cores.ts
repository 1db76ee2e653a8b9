// The payload of a cores blob: a tensor train in one buffer, little-endian.
//
//   0  "TTC1"                 4 bytes
//   4  core dtype             u8 (1 float32, 2 float64)
//   8  n_cores (d)            u32
//  12  reserved               u32
//  16  ranks r_0 .. r_d       (d + 1) x u32
//      modes n_1 .. n_d       d x u32
//      zero padding to a multiple of 8
//      core data              core k is [r_k, n_k, r_{k+1}] row-major, one after the other
import type { TensorTrain } from '../engine/types.js';

const MAGIC = Buffer.from('TTC1', 'latin1');

export function coreDtypeOf(tt: TensorTrain): 'float32' | 'float64' {
  return tt.cores.length > 0 && tt.cores[0] instanceof Float64Array ? 'float64' : 'float32';
}

/** Bytes of the core data alone (what stored_core_bytes reports). */
export function coreBytes(tt: TensorTrain): number {
  let n = 0;
  for (const c of tt.cores) n += c.byteLength;
  return n;
}

export function encodeCores(tt: TensorTrain): Buffer {
  const d = tt.modes.length;
  const head = 16 + 4 * (d + 1) + 4 * d;
  const dataStart = Math.ceil(head / 8) * 8;
  const out = Buffer.alloc(dataStart + coreBytes(tt));
  MAGIC.copy(out, 0);
  out[4] = coreDtypeOf(tt) === 'float64' ? 2 : 1;
  out.writeUInt32LE(d, 8);
  let o = 16;
  for (const r of tt.ranks) {
    out.writeUInt32LE(r, o);
    o += 4;
  }
  for (const m of tt.modes) {
    out.writeUInt32LE(m, o);
    o += 4;
  }
  o = dataStart;
  for (const c of tt.cores) {
    out.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), o);
    o += c.byteLength;
  }
  return out;
}

/** Parse a cores payload; the cores are views into `buf` (which must be 8-byte aligned). Throws on damage. */
export function decodeCores(buf: Buffer): TensorTrain {
  if (buf.length < 16 || !MAGIC.equals(buf.subarray(0, 4))) throw new Error('not a cores payload');
  if (buf.byteOffset % 8 !== 0) buf = Buffer.from(buf);
  const f64 = buf[4] === 2;
  if (!f64 && buf[4] !== 1) throw new Error('bad core dtype');
  const d = buf.readUInt32LE(8);
  const head = 16 + 4 * (d + 1) + 4 * d;
  if (buf.length < head) throw new Error('truncated cores payload');
  const ranks: number[] = [];
  const modes: number[] = [];
  let o = 16;
  for (let k = 0; k <= d; k++, o += 4) ranks.push(buf.readUInt32LE(o));
  for (let k = 0; k < d; k++, o += 4) modes.push(buf.readUInt32LE(o));
  o = Math.ceil(head / 8) * 8;
  const item = f64 ? 8 : 4;
  const cores: Array<Float32Array | Float64Array> = [];
  for (let k = 0; k < d; k++) {
    const n = ranks[k]! * modes[k]! * ranks[k + 1]!;
    if (o + n * item > buf.length) throw new Error('truncated cores payload');
    cores.push(f64 ? new Float64Array(buf.buffer, buf.byteOffset + o, n) : new Float32Array(buf.buffer, buf.byteOffset + o, n));
    o += n * item;
  }
  if (o !== buf.length) throw new Error('cores payload has trailing bytes');
  return { modes, ranks, cores: cores as Float32Array[] | Float64Array[] };
}
