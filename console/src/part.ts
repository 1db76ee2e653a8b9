// Which part of an entry a picture reads (docs/api.md, "Reading parts of an entry"): per axis the
// coarsest level that still fills the canvas, then a stride if the coarse axis is still too long, so
// a 4096^2 or 512^3 field costs about as many values as the canvas has pixels.
import type { Client } from './api';
import { decodeBase64, parseNpy, type NdArray } from './npy';

/** Values drawn per axis: a heatmap's grid, a line's points. */
export const HEATMAP_CELLS = 256;
export const THUMB_CELLS = 64;
export const LINE_POINTS = 1024;

export type Slice = [number | null, number | null, number | null];

export interface Plan {
  level: number[];
  region: Slice[];
}

function twos(n: number): number {
  let t = 0;
  while (n > 0 && n % 2 ** (t + 1) === 0) t++;
  return t;
}

/** The coarsest level (bounded by the axis's factors of 2) and the stride that bring n to at most cells. */
export function axisPlan(n: number, cells: number): { level: number; step: number } {
  let level = 0;
  while (level < twos(n) && n / 2 ** level > cells) level++;
  return { level, step: Math.max(1, Math.ceil(n / 2 ** level / cells)) };
}

/**
 * The read for a picture of `shape`: the last two axes (one for a 1-D entry) drawn at most `cells`
 * per axis; `fixed` holds the index of each axis shown as a slice (3-D and more), read at full resolution.
 */
export function planPart(shape: number[], cells: number, fixed: Map<number, number> = new Map()): Plan {
  const level: number[] = [];
  const region: Slice[] = [];
  shape.forEach((n, axis) => {
    const at = fixed.get(axis);
    if (at !== undefined) {
      level.push(0);
      region.push([at, at + 1, null]);
    } else {
      const p = axisPlan(n, cells);
      level.push(p.level);
      region.push([null, null, p.step]);
    }
  });
  return { level, region };
}

export interface Entry {
  namespace: string;
  key: string;
  version?: number;
}

/** POST /v1/serve with the plan; the answer is the part's values as float64, its shape squeezed of the sliced axes. */
export async function readPart(api: Client, e: Entry, shape: number[], cells: number, fixed?: Map<number, number>): Promise<NdArray> {
  const body: Record<string, unknown> = { namespace: e.namespace, key: e.key, target: 'dense' };
  if (e.version !== undefined) body.version = e.version;
  if (shape.length > 0) Object.assign(body, planPart(shape, cells, fixed));
  const res = await api.post<{ data_b64: string }>('/v1/serve', body);
  const arr = parseNpy(decodeBase64(res.data_b64));
  return { data: arr.data, shape: arr.shape.filter((_, axis) => !fixed?.has(axis)) };
}

/** The axes a picture shows as slices: every axis but the last two (for 3 or more axes). */
export function slicedAxes(shape: number[]): number[] {
  return shape.length >= 3 ? shape.slice(0, shape.length - 2).map((_, i) => i) : [];
}
