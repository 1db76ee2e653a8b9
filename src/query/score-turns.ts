// A query's scoring in bounded turns (CONTRACT.md section 8): the candidates are scored in chunks
// whose estimated engine work (OperandPool.scoreWork, from ranks and modes) is at most a turn's
// bound, each chunk in its own turn of the engine admission, so another tenant's engine work waits
// at most for one chunk, never for the whole query. A candidate's score depends on it and the query
// alone, so the scores are those of one pass over all of them.
import { MAX_TURN_WORK } from '../engine/limits.js';
import type { Metric, OperandPool } from '../engine/types.js';
import type { EngineAdmission, Turn } from '../admission/engine-admission.js';

/**
 * Ends (exclusive) of consecutive chunks of `works` (or sizes) whose sums stay within `bound`: a
 * chunk holds at least one candidate (one heavier than the bound is a chunk of its own) and as many
 * as fit.
 */
export function chunkEnds(works: ArrayLike<number>, bound: number): number[] {
  const ends: number[] = [];
  let sum = 0;
  for (let j = 0; j < works.length; j++) {
    const w = works[j]!;
    if (j > 0 && sum + w > bound) {
      ends.push(j);
      sum = 0;
    }
    sum += w;
  }
  if (works.length > 0) ends.push(works.length);
  return ends;
}

/** What scoring needs: the pool holding the operands, and the admission whose turns it takes. */
export interface ScoreTurns {
  pool: OperandPool;
  admission: EngineAdmission;
  /** Largest estimated work of one chunk, multiply-adds (default MAX_TURN_WORK). */
  turnWork?: number;
}

/**
 * The metric of operand `queryId` (norm `queryNorm`) against every id, chunk by chunk, each chunk in
 * `turn`; the operands must stay held until it settles. Rejects as the admission does when the
 * turn's client goes away between chunks. `works`: the pool's scoreWork for these operands, when the
 * caller kept it (operands under an id never change, so neither does it).
 */
export async function scoreInTurns(
  s: ScoreTurns,
  turn: Turn,
  queryId: number,
  queryNorm: number,
  ids: Float64Array,
  norms: Float64Array,
  metric: Metric,
  kept?: Float64Array,
): Promise<Float64Array> {
  const works = kept ?? (await s.pool.scoreWork(queryId, ids, metric));
  const ends = chunkEnds(works, s.turnWork ?? MAX_TURN_WORK);
  const workOf = (start: number, end: number) => works.subarray(start, end).reduce((a, b) => a + b, 0);
  if (ends.length === 1) return s.admission.run(turn, () => s.pool.score(queryId, queryNorm, ids, norms, metric), workOf(0, ids.length));
  const scores = new Float64Array(ids.length);
  let start = 0;
  for (const end of ends) {
    const part = await s.admission.run(
      turn,
      () => s.pool.score(queryId, queryNorm, ids.subarray(start, end), norms.subarray(start, end), metric),
      workOf(start, end),
    );
    scores.set(part, start);
    start = end;
  }
  return scores;
}
