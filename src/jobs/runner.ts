// What the job system needs from a solver engine: the solvers it offers, their param checks and one
// call that runs a simulation off the event loop (src/engine provides them; tests inject their own).
import { ProblemError } from '../http/errors.js';
import type { Engine, SimField, SimHooks, SimOutput, SimParams, SimRun } from '../engine/types.js';

export type { SimField, SimHooks, SimOutput, SimParams, SimRun };

export type SimRunner = Pick<Engine, 'solvers' | 'simulate' | 'checkSimulation'>;

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Job params (JSON values) as the engine takes them: scalars as they are; a list (helmholtz_3d
 * `modes`) as its JSON text, since the engine's params are scalars only.
 */
export function engineParams(params: Record<string, unknown>): SimParams {
  const out: SimParams = {};
  for (const [k, v] of Object.entries(params)) {
    out[k] = typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' ? v : JSON.stringify(v);
  }
  return out;
}

/** 501: the solver is one of SPEC.md's four, but this build of the engine does not have it. */
export function solverUnavailable(solver: string, available: string[] = []): ProblemError {
  return new ProblemError(
    501,
    'solver_unavailable',
    `solver ${solver} is not available in this build of the engine` + (available.length ? `; available: ${available.join(', ')}` : ''),
    { solver, available_solvers: available },
  );
}
