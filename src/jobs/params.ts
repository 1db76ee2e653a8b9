// A job's params: the solver's own, whose table (types, ranges, defaults, meaning) is the engine's
// (native/core, the one place the solver reads them), and the job system's `max_seconds`, which
// the engine never sees.
import { engine, type SimParamSpec, type SimParamTables } from '../engine/index.js';
import type { JobParams } from './job.js';
import { engineParams, type SimParams } from './runner.js';

export type { SimParamSpec, SimParamTables };

/** The run-time budget param (CONTRACT.md section 8): run time, not time queued or paused. */
export const MAX_SECONDS = { name: 'max_seconds', default: 3600, minimum: 1, maximum: 86_400 } as const;

/** Every solver's param table, as the engine checks params (read once). */
export function solverParamTables(): SimParamTables {
  return engine.solverParams();
}

/** One solver's table; empty for a solver this build lacks. */
export function paramTable(solver: string): SimParamSpec[] {
  return solverParamTables().solvers[solver] ?? [];
}

/** The job's budget in seconds (its default when the params predate it). */
export function maxSecondsOf(params: JobParams): number {
  const v = params[MAX_SECONDS.name];
  return typeof v === 'number' ? v : MAX_SECONDS.default;
}

/** The params the solver takes: the job's without the job system's own. */
export function solverParamsOf(params: JobParams): SimParams {
  const { [MAX_SECONDS.name]: _budget, ...rest } = params;
  return engineParams(rest);
}
