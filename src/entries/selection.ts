// serve's region, level and points as a client writes them (NumPy's words: slices with negative and
// missing indices, null for a whole axis) turned into the engine's Selection over an entry's shape.
// The engine then checks what depends on the data (levels against each axis's power-of-two factor,
// points against the coarse grid) before any work.
import { badRequest } from '../http/errors.js';
import type { Selection } from '../engine/types.js';

/** One axis of `region`: null (the whole axis) or [start?, stop?, step?], each integer or null. */
export type SliceRequest = null | Array<number | null>;

export interface SelectionRequest {
  region?: SliceRequest[];
  level?: number | number[];
  points?: number[][];
}

/** True when the request asks for a part of the array rather than the whole of it. */
export function isPartial(r: SelectionRequest): boolean {
  return r.region !== undefined || r.level !== undefined || r.points !== undefined;
}

/** Python's slice.indices(n): start, stop, step with negative and missing indices resolved, clamped. */
function sliceIndices(slice: SliceRequest, n: number, axis: number): [number, number, number] {
  const [start = null, stop = null, step = null] = slice ?? [];
  const st = step ?? 1;
  if (st === 0) throw badRequest(`region[${axis}]: slice step cannot be zero`, { field: `region[${axis}]` });
  const lower = st > 0 ? 0 : -1;
  const upper = st > 0 ? n : n - 1;
  const resolve = (i: number | null, missing: number): number => {
    if (i === null) return missing;
    if (i < 0) return Math.max(i + n, lower);
    return Math.min(i, upper);
  };
  return [resolve(start, st > 0 ? lower : upper), resolve(stop, st > 0 ? upper : lower), st];
}

/**
 * The engine's selection of `req` over an array of `shape`: `level` (one for every axis, or one per
 * axis), then `region` (missing trailing axes whole) or `points` (negative indices count from the
 * end), both on the coarse grid. 400 for region and points together or a wrong number of axes.
 */
export function toSelection(shape: number[], req: SelectionRequest): Selection {
  const axes = shape.length;
  if (req.region !== undefined && req.points !== undefined) {
    throw badRequest('give region or points, not both', { field: 'points' });
  }
  let level: number[] | undefined;
  if (typeof req.level === 'number') {
    level = shape.map(() => req.level as number);
  } else if (req.level !== undefined) {
    if (req.level.length !== axes) {
      throw badRequest(`level has ${req.level.length} entries; the array has ${axes} axes`, { field: 'level' });
    }
    level = req.level;
  }
  // Coarse sizes for resolving indices; a level deeper than an axis allows is the engine's 400.
  const coarse = shape.map((n, a) => Math.floor(n / 2 ** (level?.[a] ?? 0)));
  if (req.points !== undefined) {
    const points = new Float64Array(req.points.length * axes);
    for (let i = 0; i < req.points.length; i++) {
      const p = req.points[i]!;
      if (p.length !== axes) {
        throw badRequest(`points[${i}] has ${p.length} indices; the array has ${axes} axes`, { field: `points[${i}]` });
      }
      for (let a = 0; a < axes; a++) points[i * axes + a] = p[a]! < 0 ? p[a]! + coarse[a]! : p[a]!;
    }
    return { level, points };
  }
  const region = req.region ?? [];
  if (region.length > axes) {
    throw badRequest(`region has ${region.length} slices; the array has ${axes} axes`, { field: 'region' });
  }
  return { level, region: coarse.map((n, a) => sliceIndices(region[a] ?? null, n, a)) };
}
