// The typed, asynchronous face of the native engine (DESIGN.md: src/engine). Every method that
// touches array data or core values runs on a worker thread and returns a Promise; argument errors
// reject (never throw synchronously) with a TypeError or RangeError whose code is ERR_TTS_INVALID.
import { loadAddon } from './load.js';
import type { NativeAddon } from './native.js';
import type {
  ArrayBytes,
  CompressOptions,
  CompressResult,
  DType,
  Engine,
  EngineInfo,
  EngineTestCalls,
  Fingerprint,
  LayoutName,
  OperandPool,
  SimHooks,
  SimParams,
  SimParamTables,
  SimRun,
  TensorTrain,
  TrainWork,
} from './types.js';
import { GpuPlacementError, type BackendChoice, type BackendSelection, type GpuPlacement } from './gpu.js';

export * from './types.js';
export * from './gpu.js';
export { addonCandidates, packageRoot } from './load.js';

/** Error codes the engine sets on what it throws or rejects with. */
export const ENGINE_INVALID = 'ERR_TTS_INVALID';
export const ENGINE_INTERNAL = 'ERR_TTS_INTERNAL';
/** A simulation's result after cancel(). */
export const ENGINE_CANCELLED = 'ERR_TTS_CANCELLED';

export type EngineError = Error & { code: typeof ENGINE_INVALID | typeof ENGINE_INTERNAL | typeof ENGINE_CANCELLED };

/** True for the engine's "bad input" errors (a 400 at the HTTP edge), false for anything else. */
export function isInvalidInput(err: unknown): err is EngineError {
  return err instanceof Error && (err as { code?: unknown }).code === ENGINE_INVALID;
}

let addon: NativeAddon | undefined;
let paramTables: SimParamTables | undefined;

/** The loaded addon (loaded on first use, so importing this module never fails on its own). */
export function native(): NativeAddon {
  addon ??= loadAddon();
  return addon;
}

// Runs `call` so that a synchronous throw from the addon's argument checks becomes a rejection.
async function settle<T>(call: () => Promise<T>): Promise<T> {
  return call();
}

export const engine: Engine = {
  /** Backend facts (version, BLAS, OpenMP threads); synchronous, microseconds. */
  info(): EngineInfo {
    return native().info();
  },

  /** Layout for a shape (default: the engine's choice) and its QTT mode sizes; synchronous, cheap. */
  layoutFor(shape: number[], layout?: LayoutName): { layout: LayoutName; modes: number[] } {
    return native().layoutFor(shape, layout);
  },

  /** Header arithmetic over the train's modes and ranks; synchronous, microseconds. */
  trainWork(modes: number[], ranks: number[], target: number[]): TrainWork {
    return native().trainWork(modes, ranks, target);
  },

  /** QTT-SVD of a dense array (read in place, never copied); O(numel * r^2) on the worker pool. */
  compress(data: ArrayBytes, dtype: DType, shape: number[], opts: CompressOptions): Promise<CompressResult> {
    return settle(() => native().compress(data, dtype, shape, opts));
  },

  /** `src`'s elements (a whole number of `dtype`) as float64 into dst from dstOffset; off-thread. */
  widen(src: ArrayBytes, dtype: DType, dst: Float64Array, dstOffset: number, lanes?: Float64Array): Promise<void> {
    return settle(() => native().widen(src, dtype, dst, dstOffset, lanes));
  },

  /**
   * Dense array of `dtype` as bytes (numel * item size): written into `out` when given (a reused
   * buffer spares the page faults of a fresh one), else a fresh buffer; O(numel * r^2), off-thread.
   */
  reconstruct(tt, shape, layout, dtype, reference, out) {
    return settle(() => native().reconstruct(tt, shape, layout, dtype, reference, out));
  },

  /** Errors of tt against `reference` without materialising the array; O(numel * r^2), off-thread. */
  fingerprint(tt: TensorTrain, shape: number[], layout: LayoutName, reference: ArrayBytes, dtype: DType): Promise<Fingerprint> {
    return settle(() => native().fingerprint(tt, shape, layout, reference, dtype));
  },

  /** A selection checked against a shape and its work estimated; synchronous, O(points + modes). */
  selection(shape, selection, train) {
    return native().selection(shape, selection, train);
  },

  /** The selected values from the cores; about the output's size times r^2, off-thread. */
  reconstructSelection(tt, shape, layout, dtype, selection) {
    return settle(() => native().reconstructSelection(tt, shape, layout, dtype, selection));
  },

  /** The selected values of a dense array (read in place); off-thread. */
  selectDense(data, dtype, shape, selection) {
    return settle(() => native().selectDense(data, dtype, shape, selection));
  },

  /** ||a||_2 from the cores; O(d n r^3). */
  norm(a: TensorTrain): Promise<number> {
    return settle(() => native().norm(a));
  },

  /** Registered solver names, sorted; synchronous, microseconds. */
  solvers(): string[] {
    return native().solvers();
  },

  /**
   * Starts a solver on a thread of its own; bad params reject `result` (ERR_TTS_INVALID, naming the
   * param) before anything runs. Hooks are called on the event loop.
   */
  simulate(solver: string, params: SimParams, hooks: SimHooks = {}): SimRun {
    try {
      const onProgress = hooks.onProgress?.bind(hooks);
      const onSnapshot = hooks.onSnapshot?.bind(hooks);
      const onPaused = hooks.onPaused?.bind(hooks);
      return native().simulate(solver, params, onProgress, onSnapshot, onPaused);
    } catch (err) {
      return { result: Promise.reject(err), cancel() {}, pause() {}, resume() {} };
    }
  },

  /** simulate()'s param checks alone (the solver's table and its rules between params); microseconds. */
  checkSimulation(solver: string, params: SimParams): void {
    native().checkSimulation(solver, params);
  },

  /** The solvers' param tables, read once from the addon. */
  solverParams(): SimParamTables {
    paramTables ??= native().solverParams();
    return paramTables;
  },

  /** A query operand pool in native memory; scores are O(d n r^3) per train pair, never a dense rebuild. */
  createOperandPool(): OperandPool {
    const pool = new (native().OperandPool)();
    return {
      addTrain: (id, tt, modes) => settle(() => pool.addTrain(id, tt, modes)),
      addDense: (id, data, dtype, shape, layout) => settle(() => pool.addDense(id, data, dtype, shape, layout)),
      remove: (id) => pool.remove(id),
      has: (id) => pool.has(id),
      stats: () => pool.stats(),
      norm: (id) => settle(() => pool.norm(id)),
      score: (queryId, queryNorm, ids, norms, metric) => settle(() => pool.score(queryId, queryNorm, ids, norms, metric)),
      scoreWork: (queryId, ids, metric) => settle(() => pool.scoreWork(queryId, ids, metric)),
    };
  },

  /** Picks the backend for the process (synchronous); throws an Error with code ERR_TTS_GPU_* for 'cuda' without a device. */
  selectBackend(choice: BackendChoice): BackendSelection {
    return native().setBackend(choice);
  },

  gpu: {
    async place(device, id, tt) {
      const r = await native().gpu.place(device, id, tt);
      if ('error' in r) throw new GpuPlacementError(r.error, r.message);
      return r;
    },
    evict: (id) => native().gpu.evict(id),
    resident: (device, id) => native().gpu.resident(device, id),
    setBudget: (bytes) => native().gpu.setBudget(bytes),
    stats: (device) => native().gpu.stats(device),
  } satisfies GpuPlacement,
};

/** Test-only calls of the addon (EngineTestCalls says why they are not part of Engine). */
export const engineTestCalls: EngineTestCalls = {
  /** <a, b> from the cores; O(d n r^3), independent of the dense size. */
  dot(a: TensorTrain, b: TensorTrain): Promise<number> {
    return settle(() => native().dot(a, b));
  },

  /** ||a - b||_2 from the cores (>= 0); O(d n r^3). */
  distance(a: TensorTrain, b: TensorTrain): Promise<number> {
    return settle(() => native().distance(a, b));
  },

  /** <q, c_j> for every candidate in one call, parallel over candidates; O(k d n r^3). */
  dotBatch(q: TensorTrain, candidates: TensorTrain[]): Promise<Float64Array> {
    return settle(() => native().dotBatch(q, candidates));
  },

  /** TT rounding to a relative tolerance and rank cap; Float64Array cores; O(d n r^3). */
  round(tt: TensorTrain, opts: { tolerance: number; maxRank?: number }): Promise<TensorTrain> {
    return settle(() => native().round(tt, opts));
  },
};

/** OpenMP threads for later calls (0: all cores); synchronous. Not part of Engine (process-wide). */
export function setThreads(n: number): void {
  native().setThreads(n);
}

/**
 * glibc malloc's M_TRIM_THRESHOLD and M_MMAP_THRESHOLD for the whole process (see
 * src/runtime/process-memory.ts); synchronous. False where the C library is not glibc (nothing changes).
 * Not part of Engine (process-wide). Throws a RangeError (ERR_TTS_INVALID) outside
 * [0, 1 GiB] and [0, 32 MiB].
 */
export function retainFreedMemory(settings: { trimThresholdBytes: number; mmapThresholdBytes: number }): boolean {
  return native().retainFreedMemory(settings.trimThresholdBytes, settings.mmapThresholdBytes);
}
