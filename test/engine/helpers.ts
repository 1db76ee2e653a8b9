// Independent JS references for the engine tests: the layout of CONTRACT.md section 3, dense
// reconstruction of a TT from its cores, the fingerprint, dtype casts, and deterministic data.
// Nothing here calls the engine, so agreement with it is evidence, not tautology.
import { ITEM_SIZE, type DType, type LayoutName, type TensorTrain } from '../../src/engine/index.js';
import { halfToFloat } from '../../src/entries/norm.js';
import { rng } from '../helpers/prng.js';

/** Mode sizes and, per mode, how far one unit of its digit moves in the C-order flattening. */
export function jsLayout(shape: number[], layout: LayoutName): { modes: number[]; weights: number[] } {
  const strides = shape.map((_, j) => shape.slice(j + 1).reduce((a, b) => a * b, 1));
  const axes = shape.map((n) => {
    let m = n;
    let a = 0;
    while (m % 2 === 0) {
      m /= 2;
      a += 1;
    }
    return { m, a };
  });
  const modes: number[] = [];
  const weights: number[] = [];
  if (layout === 'row_major') {
    axes.forEach(({ m, a }, j) => {
      if (m > 1) {
        modes.push(m);
        weights.push(2 ** a * strides[j]!);
      }
      for (let l = 1; l <= a; l++) {
        modes.push(2);
        weights.push(2 ** (a - l) * strides[j]!);
      }
    });
  } else {
    axes.forEach(({ m, a }, j) => {
      if (m > 1) {
        modes.push(m);
        weights.push(2 ** a * strides[j]!);
      }
    });
    const levels = Math.max(0, ...axes.map((x) => x.a));
    for (let l = 1; l <= levels; l++) {
      axes.forEach(({ a }, j) => {
        if (a >= l) {
          modes.push(2);
          weights.push(2 ** (a - l) * strides[j]!);
        }
      });
    }
  }
  // A single element still has one core (mode size 1), so a TT can hold its value.
  if (modes.length === 0) return { modes: [1], weights: [1] };
  return { modes, weights };
}

/** Dense values of a TT in mode order (row-major over the modes), float64. */
export function denseModeOrder(tt: TensorTrain): Float64Array {
  // left[(i_1..i_k), a] for the prefix, grown one core at a time.
  let left = new Float64Array([1]);
  let rows = 1;
  tt.modes.forEach((n, k) => {
    const r0 = tt.ranks[k]!;
    const r1 = tt.ranks[k + 1]!;
    const core = tt.cores[k]!;
    const next = new Float64Array(rows * n * r1);
    for (let p = 0; p < rows; p++) {
      for (let a = 0; a < r0; a++) {
        const l = left[p * r0 + a]!;
        if (l === 0) continue;
        for (let i = 0; i < n; i++) {
          const dst = (p * n + i) * r1;
          const src = (a * n + i) * r1;
          for (let b = 0; b < r1; b++) next[dst + b]! += l * core[src + b]!;
        }
      }
    }
    left = next;
    rows *= n;
  });
  return left;
}

/** Dense C-order float64 array of a TT stored in `layout` over `shape`. */
export function denseArray(tt: TensorTrain, shape: number[], layout: LayoutName): Float64Array {
  const modeOrder = denseModeOrder(tt);
  const { modes, weights } = jsLayout(shape, layout);
  const out = new Float64Array(modeOrder.length);
  const idx = new Array<number>(modes.length).fill(0);
  let offset = 0;
  for (let t = 0; t < modeOrder.length; t++) {
    out[offset] = modeOrder[t]!;
    // odometer over the mode digits, last fastest, tracking the array offset
    for (let k = modes.length - 1; k >= 0; k--) {
      idx[k]! += 1;
      offset += weights[k]!;
      if (idx[k]! < modes[k]!) break;
      offset -= idx[k]! * weights[k]!;
      idx[k] = 0;
    }
  }
  return out;
}

export interface JsFingerprint {
  frobenius_error: number;
  max_abs_error: number;
  relative_error: number;
}

/** CONTRACT.md section 3 errors of y against x (both float64). */
export function jsFingerprint(x: ArrayLike<number>, y: ArrayLike<number>): JsFingerprint {
  let diff2 = 0;
  let ref2 = 0;
  let maxAbs = 0;
  for (let i = 0; i < x.length; i++) {
    const d = x[i]! - y[i]!;
    diff2 += d * d;
    ref2 += x[i]! * x[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(d));
  }
  const fro = Math.sqrt(diff2);
  const rel = ref2 === 0 ? (fro === 0 ? 0 : Infinity) : fro / Math.sqrt(ref2);
  return { frobenius_error: fro, max_abs_error: maxAbs, relative_error: rel };
}

/** Relative difference |a - b| / max(|a|, |b|, tiny). */
export function relDiff(a: number, b: number, tiny = 1e-300): number {
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), tiny);
}

// ---- dtypes --------------------------------------------------------------------------------------

const F16_BUF = new DataView(new ArrayBuffer(4));

/** IEEE half bits -> number. */
export const halfToNumber = halfToFloat;

/** number -> IEEE half bits (round to nearest even; enough for test data in range). */
export function numberToHalf(x: number): number {
  F16_BUF.setFloat32(0, x);
  const bits = F16_BUF.getUint32(0);
  const sign = (bits >>> 16) & 0x8000;
  const exp = ((bits >>> 23) & 0xff) - 127 + 15;
  let mant = bits & 0x7fffff;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    const half = 1 << (shift - 1);
    let v = mant >> shift;
    const rem = mant & ((1 << shift) - 1);
    if (rem > half || (rem === half && v & 1)) v += 1;
    return sign | v;
  }
  if (exp >= 31) return sign | 0x7c00;
  let v = (exp << 10) | (mant >> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && v & 1)) v += 1;
  return sign | v;
}

/** The elements of raw little-endian bytes of `dtype`, as float64 (int64 via Number). */
export function toFloat64(bytes: Uint8Array, dtype: DType): Float64Array {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = ITEM[dtype];
  const n = bytes.byteLength / size;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const o = i * size;
    switch (dtype) {
      case 'float64':
        out[i] = dv.getFloat64(o, true);
        break;
      case 'float32':
        out[i] = dv.getFloat32(o, true);
        break;
      case 'float16':
        out[i] = halfToNumber(dv.getUint16(o, true));
        break;
      case 'int64':
        out[i] = Number(dv.getBigInt64(o, true));
        break;
      case 'int32':
        out[i] = dv.getInt32(o, true);
        break;
      case 'int16':
        out[i] = dv.getInt16(o, true);
        break;
      case 'int8':
        out[i] = dv.getInt8(o);
        break;
      case 'uint64':
        out[i] = Number(dv.getBigUint64(o, true));
        break;
      case 'uint32':
        out[i] = dv.getUint32(o, true);
        break;
      case 'uint16':
        out[i] = dv.getUint16(o, true);
        break;
      case 'uint8':
        out[i] = dv.getUint8(o);
        break;
      case 'bool':
        out[i] = dv.getUint8(o) ? 1 : 0;
        break;
    }
  }
  return out;
}

/** Values (already in range and integral where needed) -> raw little-endian bytes of `dtype`. */
export function fromFloat64(values: ArrayLike<number>, dtype: DType): Uint8Array {
  const size = ITEM[dtype];
  const bytes = new Uint8Array(values.length * size);
  const dv = new DataView(bytes.buffer);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const o = i * size;
    switch (dtype) {
      case 'float64':
        dv.setFloat64(o, v, true);
        break;
      case 'float32':
        dv.setFloat32(o, v, true);
        break;
      case 'float16':
        dv.setUint16(o, numberToHalf(v), true);
        break;
      case 'int64':
        dv.setBigInt64(o, BigInt(v), true);
        break;
      case 'int32':
        dv.setInt32(o, v, true);
        break;
      case 'int16':
        dv.setInt16(o, v, true);
        break;
      case 'int8':
        dv.setInt8(o, v);
        break;
      case 'uint64':
        dv.setBigUint64(o, BigInt(v), true);
        break;
      case 'uint32':
        dv.setUint32(o, v, true);
        break;
      case 'uint16':
        dv.setUint16(o, v, true);
        break;
      case 'uint8':
        dv.setUint8(o, v);
        break;
      case 'bool':
        dv.setUint8(o, v ? 1 : 0);
        break;
    }
  }
  return bytes;
}

// Float64 values -> bytes of dtype with the engine's casts: round half to even and saturate for
// integers, >= 0.5 for bool.
export function castBytes(v: Float64Array, dtype: DType): Uint8Array {
  const range: Partial<Record<DType, [number, number]>> = {
    int64: [-(2 ** 63), 2 ** 63 - 1024],
    int32: [-(2 ** 31), 2 ** 31 - 1],
    int16: [-32768, 32767],
    int8: [-128, 127],
    uint64: [0, 2 ** 64 - 2048],
    uint32: [0, 2 ** 32 - 1],
    uint16: [0, 65535],
    uint8: [0, 255],
  };
  const r = range[dtype];
  if (dtype === 'bool')
    return fromFloat64(
      v.map((x) => (x >= 0.5 ? 1 : 0)),
      dtype,
    );
  if (!r) return fromFloat64(v, dtype);
  return fromFloat64(
    v.map((x) => Math.min(r[1], Math.max(r[0], roundHalfEven(x)))),
    dtype,
  );
}

export function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

const ITEM = ITEM_SIZE;

// ---- the event loop ------------------------------------------------------------------------------

/** Ticks of a 1 ms interval while `work` runs: how many, and the longest gap between two. */
export async function ticksDuring<T>(work: () => Promise<T>): Promise<{ result: T; ticks: number; maxGapMs: number; ms: number }> {
  let ticks = 0;
  let last = performance.now();
  let maxGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks += 1;
  }, 1);
  const t0 = performance.now();
  try {
    const result = await work();
    return { result, ticks, maxGapMs, ms: performance.now() - t0 };
  } finally {
    clearInterval(timer);
  }
}

export { rng };

// ---- data ----------------------------------------------------------------------------------------

/** f(x) at x_i = i / n, i = 0..n-1, as float64. */
export function sample1d(n: number, f: (x: number) => number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = f(i / n);
  return out;
}

/** f(coordinates in [0,1)^d) over a C-order grid of `shape`. */
export function sampleGrid(shape: number[], f: (x: number[]) => number): Float64Array {
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Float64Array(n);
  const idx = new Array<number>(shape.length).fill(0);
  for (let t = 0; t < n; t++) {
    out[t] = f(idx.map((i, j) => i / shape[j]!));
    for (let k = shape.length - 1; k >= 0; k--) {
      idx[k]! += 1;
      if (idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return out;
}

/** A random TT with Float64Array cores (entries uniform in [-1, 1)). */
export function randomTrain(modes: number[], ranks: number[], seed: number): TensorTrain {
  const r = rng(seed);
  const cores = modes.map((n, k) => {
    const c = new Float64Array(ranks[k]! * n * ranks[k + 1]!);
    for (let i = 0; i < c.length; i++) c[i] = 2 * r() - 1;
    return c;
  });
  return { modes: [...modes], ranks: [...ranks], cores };
}

export function dotDense(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function maxRank(tt: TensorTrain): number {
  return Math.max(...tt.ranks);
}
