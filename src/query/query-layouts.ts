// A query in the layouts of its candidates (CONTRACT.md section 3): entries of one shape are
// comparable whatever their layouts, so a query is held once in each layout its candidates are held
// in, and each group is scored core against core in its own layout. A stored train is rebuilt in
// float64 and decomposed again in the other layout at its target (at most 1e-6; kept as its values
// there when its cores would not be smaller); an uncompressed entry is only gathered into the other
// mode order. The query service holds what this makes in the core cache, by entry and layout, so a
// key queried again is not moved again until it changes.
import { compressWork } from '../engine/limits.js';
import { ITEM_SIZE, type Engine, type LayoutName, type OperandPool } from '../engine/types.js';
import type { EngineAdmission, Turn } from '../admission/engine-admission.js';
import { shapeOf } from '../entries/entry.js';
import type { EntryService } from '../entries/service.js';
import type { StorageRef } from '../store/entries.js';

/**
 * Largest relative error of a train brought into another layout: a cosine moves by at most that much,
 * a tenth of CONTRACT.md section 6's 1e-5. A train is moved at its own target when that is tighter:
 * rounding at its target keeps the ranks it has (a tighter one would spend ranks on its truncation
 * error, several times the scoring work).
 */
export const LAYOUT_CHANGE_TOLERANCE = 1e-6;

/** The relative error a stored train with target `tolerance` is moved into another layout at. */
export function layoutChangeTolerance(tolerance: number): number {
  return Math.min(tolerance, LAYOUT_CHANGE_TOLERANCE);
}

/** The distinct layouts of `rows`, first seen first. */
export function layoutsOf(rows: ReadonlyArray<{ layout: LayoutName }>): LayoutName[] {
  const seen = new Set<LayoutName>();
  for (const r of rows) seen.add(r.layout);
  return [...seen];
}

export interface LayoutChange {
  engine: Engine;
  pool: OperandPool;
  entries: Pick<EntryService, 'readCores' | 'readDense'>;
  admission: EngineAdmission;
}

/**
 * Holds the stored entry `row` (stored at target `tolerance`) under `id` in `layout` (not its own),
 * each engine step in `turn`: a rebuild, a decomposition (both bounded as a serve and a put of the
 * entry are) and the copy. Resolves to the bytes it holds in the pool.
 */
export async function holdInLayout(
  c: LayoutChange,
  id: number,
  row: StorageRef,
  tolerance: number,
  layout: LayoutName,
  turn: Turn,
): Promise<number> {
  const shape = shapeOf(row);
  if (row.blob_kind !== 'cores') {
    const raw = await c.entries.readDense(row);
    return c.admission.run(turn, () => c.pool.addDense(id, raw, row.dtype, shape, layout), raw.length / ITEM_SIZE[row.dtype]);
  }
  const tt = await c.entries.readCores(row);
  const values = shape.reduce((a, b) => a * b, 1);
  const rebuild = c.engine.trainWork(tt.modes, tt.ranks, tt.modes).reconstruction;
  const { data } = await c.admission.run(turn, () => c.engine.reconstruct(tt, shape, row.layout, 'float64'), rebuild);
  const r = await c.admission.run(
    turn,
    () => c.engine.compress(data, 'float64', shape, { tolerance: layoutChangeTolerance(tolerance), layout }),
    compressWork(values, 1),
  );
  const { modes, ranks } = r.tt;
  return c.admission.run(
    turn,
    () => (r.compressible ? c.pool.addTrain(id, r.tt) : c.pool.addDense(id, data, 'float64', shape, layout)),
    r.compressible ? c.engine.trainWork(modes, ranks, modes).contraction : values,
  );
}
