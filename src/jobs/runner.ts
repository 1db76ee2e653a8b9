// What the job system needs from a solver engine: the solvers it offers and one call that runs a
// simulation off the event loop. The real engine (src/engine) provides both; tests inject their own.
import { ProblemError } from '../errors.js';

/** One output array of a solver: float64, C order, shape as the solver defines it. */
export interface SimField {
  name: string;
  shape: number[];
  data: Float64Array;
}

export interface SimOutput {
  fields: SimField[];
  stats: Record<string, number>;
}

export interface SimHooks {
  /** `done` of `total` steps (iterations for an elliptic solve); called on the event loop. */
  onProgress?(done: number, total: number): void;
  /** Fields at step `step`, time `t` (only when params.snapshot_every is set). */
  onSnapshot?(step: number, t: number, fields: SimField[]): void;
}

export interface SimRun {
  /** Resolves with the final fields; rejects with code ERR_TTS_INVALID (bad params), ERR_TTS_CANCELLED (cancel) or another error. */
  result: Promise<SimOutput>;
  /** Ask the solver to stop at its next step; `result` then rejects with ERR_TTS_CANCELLED. */
  cancel(): void;
}

export type EngineParamValue = number | string | boolean;

export interface SimRunner {
  /** Solver ids this build can run. */
  solvers(): string[];
  simulate(solver: string, params: Record<string, EngineParamValue>, hooks?: SimHooks): SimRun;
}

/** Engine error codes of a simulation. */
export const SIM_INVALID = 'ERR_TTS_INVALID';
export const SIM_CANCELLED = 'ERR_TTS_CANCELLED';

export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The part of the engine's face this module uses; both methods are absent on builds without solvers. */
interface SimulatingEngine {
  solvers?(): string[];
  simulate?(solver: string, params: Record<string, EngineParamValue>, hooks?: SimHooks): SimRun;
}

/**
 * The engine as a SimRunner. Job params are JSON (helmholtz_3d `modes` is a list); the engine takes
 * scalar values only, so a list travels as its JSON text.
 */
export function engineRunner(engine: object): SimRunner {
  const e = engine as SimulatingEngine;
  return {
    solvers(): string[] {
      return typeof e.solvers === 'function' ? e.solvers() : [];
    },
    simulate(solver, params, hooks) {
      if (typeof e.simulate !== 'function') throw solverUnavailable(solver);
      return e.simulate(solver, params, hooks);
    },
  };
}

/** Job params (JSON values) as the engine takes them: scalars as they are, anything else as JSON text. */
export function engineParams(params: Record<string, unknown>): Record<string, EngineParamValue> {
  const out: Record<string, EngineParamValue> = {};
  for (const [k, v] of Object.entries(params)) {
    out[k] = typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' ? v : JSON.stringify(v);
  }
  return out;
}

/** 501: the solver is one of SPEC.md's four, but this build of the engine does not have it. */
export function solverUnavailable(solver: string, available: string[] = []): ProblemError {
  return new ProblemError(501, 'solver_unavailable',
    `solver ${solver} is not available in this build of the engine` +
    (available.length ? `; available: ${available.join(', ')}` : ''),
    { solver, available_solvers: available });
}

