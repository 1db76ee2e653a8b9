// Deterministic test fields for the benchmarks (float32, C order). Coordinates are i / n in [0, 1).

import { rng } from '../test/helpers/prng.js';

export { rng };

export interface Field {
  name: string;
  shape: number[];
  data: Float32Array;
}

function fill1d(n: number, f: (x: number) => number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = f(i / n);
  return out;
}

const smoothFn = (x: number): number => Math.sin(12 * x) + 0.5 * Math.exp(-((x - 0.6) ** 2) / 0.02) + 0.2 * x * x * x;

/** A smooth analytic 1-D field. */
export function smooth1d(n: number): Field {
  return { name: `smooth_${log2(n)}`, shape: [n], data: fill1d(n, smoothFn) };
}

/** A sharp front: tanh((x - 0.37) / 1e-3). */
export function front1d(n: number): Field {
  return { name: `front_${log2(n)}`, shape: [n], data: fill1d(n, (x) => Math.tanh((x - 0.37) / 1e-3)) };
}

/** The smooth field plus Gaussian-ish noise of 1e-3 of its RMS. */
export function noisy1d(n: number): Field {
  const data = fill1d(n, smoothFn);
  let ss = 0;
  for (let i = 0; i < n; i++) ss += data[i]! * data[i]!;
  const sigma = 1e-3 * Math.sqrt(ss / n);
  const r = rng(12345);
  for (let i = 0; i < n; i++) data[i] = data[i]! + sigma * (r() + r() + r() - 1.5) * 2; // variance 1
  return { name: `noisy_${log2(n)}`, shape: [n], data };
}

function fillGrid(shape: number[], f: (c: number[]) => number): Float32Array {
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  const idx = new Array<number>(shape.length).fill(0);
  const c = new Array<number>(shape.length).fill(0);
  for (let t = 0; t < n; t++) {
    for (let j = 0; j < shape.length; j++) c[j] = idx[j]! / shape[j]!;
    out[t] = f(c);
    for (let k = shape.length - 1; k >= 0; k--) {
      idx[k]! += 1;
      if (idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
  return out;
}

/** A smooth, non-separable 2-D field. */
export function smooth2d(n: number): Field {
  return {
    name: `smooth2d_${n}x${n}`,
    shape: [n, n],
    data: fillGrid([n, n], ([x, y]) => Math.sin(3 * x! + 2 * y!) * Math.exp(-(x! * x! + y! * y!)) + Math.cos(5 * x! * y!)),
  };
}

/** A Gaussian bump off centre. */
export function gaussian2d(n: number): Field {
  return {
    name: `gauss2d_${n}x${n}`,
    shape: [n, n],
    data: fillGrid([n, n], ([x, y]) => Math.exp(-(((x! - 0.3) ** 2 + (y! - 0.55) ** 2) / (2 * 0.05 ** 2)))),
  };
}

/** A front along the diagonal x + y = 1, width 1e-2. */
export function diagonalFront2d(n: number): Field {
  return {
    name: `diagfront2d_${n}x${n}`,
    shape: [n, n],
    data: fillGrid([n, n], ([x, y]) => Math.tanh((x! + y! - 1) / 1e-2)),
  };
}

/** A smooth, non-separable 3-D field. */
export function smooth3d(n: number): Field {
  return {
    name: `smooth3d_${n}^3`,
    shape: [n, n, n],
    data: fillGrid(
      [n, n, n],
      ([x, y, z]) => Math.sin(x! + 2 * y! + 3 * z!) + Math.exp(-((x! - 0.5) ** 2 + (y! - 0.4) ** 2 + (z! - 0.6) ** 2) / 0.1),
    ),
  };
}

function log2(n: number): string {
  const l = Math.log2(n);
  return Number.isInteger(l) ? `2^${l}` : String(n);
}

/** bench:query's field j of n points: a sum of M = 1..4 sinusoids (QTT rank 2M), by a rotation recurrence (no per-element sin). */
export function sinusoids(j: number, n: number): { data: Float32Array; terms: number } {
  const r = rng(1000 + j);
  const terms = 1 + Math.floor(r() * 4);
  const acc = new Float64Array(n);
  for (let m = 0; m < terms; m++) {
    const k = 1 + Math.floor(r() * 48);
    const amp = 0.5 + r();
    const phase = 2 * Math.PI * r();
    const dc = Math.cos((2 * Math.PI * k) / n);
    const ds = Math.sin((2 * Math.PI * k) / n);
    let c = Math.cos(phase);
    let s = Math.sin(phase);
    for (let i = 0; i < n; i++) {
      acc[i] += amp * s;
      const c2 = c * dc - s * ds;
      s = s * dc + c * ds;
      c = c2;
    }
  }
  return { data: Float32Array.from(acc), terms };
}
