// The L2 norm of an uncompressed payload, kept with the entry for the query feature. Small arrays are
// summed here; large ones by the engine, as the error of an all-zero train against the data (so the
// element loop runs on the engine's threads, not on the event loop).
import type { DType, Engine, LayoutName } from '../engine/types.js';
import { ITEM_SIZE } from '../engine/types.js';

const JS_MAX_ELEMENTS = 1 << 16;

export function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * f * 2 ** -24;
  if (e === 31) return f ? NaN : s * Infinity;
  return s * (1 + f / 1024) * 2 ** (e - 15);
}

/** Sum of squares of elements [from, to) of C-order little-endian `data`. */
function sumSquares(dv: DataView, dtype: DType, from: number, to: number): number {
  let s = 0;
  const size = ITEM_SIZE[dtype];
  for (let i = from; i < to; i++) {
    const o = i * size;
    let v: number;
    switch (dtype) {
      case 'float64':
        v = dv.getFloat64(o, true);
        break;
      case 'float32':
        v = dv.getFloat32(o, true);
        break;
      case 'float16':
        v = halfToFloat(dv.getUint16(o, true));
        break;
      case 'int64':
        v = Number(dv.getBigInt64(o, true));
        break;
      case 'uint64':
        v = Number(dv.getBigUint64(o, true));
        break;
      case 'int32':
        v = dv.getInt32(o, true);
        break;
      case 'uint32':
        v = dv.getUint32(o, true);
        break;
      case 'int16':
        v = dv.getInt16(o, true);
        break;
      case 'uint16':
        v = dv.getUint16(o, true);
        break;
      case 'int8':
        v = dv.getInt8(o);
        break;
      case 'uint8':
        v = dv.getUint8(o);
        break;
      case 'bool':
        v = dv.getUint8(o) ? 1 : 0;
        break;
    }
    s += v * v;
  }
  return s;
}

/** ||data||_2 computed in JavaScript, yielding to the event loop between chunks. */
export async function denseNormJs(data: Uint8Array, dtype: DType): Promise<number> {
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data.byteLength / ITEM_SIZE[dtype];
  let s = 0;
  for (let from = 0; from < n; from += JS_MAX_ELEMENTS) {
    s += sumSquares(dv, dtype, from, Math.min(n, from + JS_MAX_ELEMENTS));
    if (from + JS_MAX_ELEMENTS < n) await new Promise((r) => setImmediate(r));
  }
  return Math.sqrt(s);
}

/** ||data||_2 of a dense C-order array, or null when it is not finite. */
export async function denseNorm(
  engine: Engine,
  data: Uint8Array,
  dtype: DType,
  shape: number[],
  layout: LayoutName,
  modes: number[],
): Promise<number | null> {
  const n = data.byteLength / ITEM_SIZE[dtype];
  let norm: number | undefined;
  if (n > JS_MAX_ELEMENTS && modes.length > 0) {
    try {
      const zero = { modes, ranks: new Array<number>(modes.length + 1).fill(1), cores: modes.map((m) => new Float64Array(m)) };
      norm = (await engine.fingerprint(zero, shape, layout, data, dtype)).frobenius_error;
    } catch {
      norm = undefined; // fall back to the loop below
    }
  }
  norm ??= await denseNormJs(data, dtype);
  return Number.isFinite(norm) ? norm : null;
}
