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

/** The part of a C-order array a selection reads, as a smaller C-order array of its own. */
export interface RowSpan {
  /** First element of the part, and how many it holds. */
  offset: number;
  count: number;
  /** The part's shape and the same selection over it. */
  shape: number[];
  selection: Selection;
}

/**
 * Where a selection's values lie in a C-order array of `shape`: the leading axes each selection
 * reads at one index (at level 0) are fixed, the next axis is cut to the rows between its lowest
 * and highest selected index (whole blocks at its level), the rest are whole. That part is one
 * contiguous run; undefined when it is more than half the array (reading it all costs about as much).
 */
export function rowSpan(shape: number[], sel: Selection): RowSpan | undefined {
  const axes = shape.length;
  if (axes === 0) return undefined;
  const level = sel.level ?? shape.map(() => 0);
  const lo: number[] = [];
  const hi: number[] = [];
  if (sel.points) {
    const n = sel.points.length / axes;
    if (n === 0) return undefined;
    for (let a = 0; a < axes; a++) {
      let min = Infinity;
      let max = -Infinity;
      for (let i = 0; i < n; i++) {
        const v = sel.points[i * axes + a]!;
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      lo.push(min);
      hi.push(max);
    }
  } else {
    for (const [start, stop, step] of sel.region ?? []) {
      const count = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
      if (count <= 0) return undefined;
      const last = start + (count - 1) * step;
      lo.push(Math.min(start, last));
      hi.push(Math.max(start, last));
    }
    if (lo.length !== axes) return undefined;
  }
  let a = 0;
  while (a < axes - 1 && lo[a] === hi[a] && level[a] === 0) a++;
  const stride = (b: number) => shape.slice(b + 1).reduce((x, y) => x * y, 1);
  const rows = (hi[a]! - lo[a]! + 1) * 2 ** level[a]!;
  let offset = lo[a]! * 2 ** level[a]! * stride(a);
  for (let b = 0; b < a; b++) offset += lo[b]! * stride(b);
  const count = rows * stride(a);
  if (2 * count > shape.reduce((x, y) => x * y, 1)) return undefined;
  const subShape = [rows, ...shape.slice(a + 1)];
  const subLevel = sel.level ? sel.level.slice(a) : undefined;
  if (sel.points) {
    const n = sel.points.length / axes;
    const points = new Float64Array(n * (axes - a));
    for (let i = 0; i < n; i++) {
      for (let b = a; b < axes; b++) points[i * (axes - a) + b - a] = sel.points[i * axes + b]! - (b === a ? lo[a]! : 0);
    }
    return { offset, count, shape: subShape, selection: { level: subLevel, points } };
  }
  const region = sel.region!.slice(a).map(([start, stop, step], i): [number, number, number] => {
    if (i > 0) return [start, stop, step];
    const count = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
    const s = start - lo[a]!;
    return [s, step > 0 ? Math.min(s + count * step, hi[a]! - lo[a]! + 1) : Math.max(s + count * step, -1), step];
  });
  return { offset, count, shape: subShape, selection: { level: subLevel, region } };
}
