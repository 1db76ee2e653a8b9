// The typed face of the native engine. Everything here is plain data; the addon does the work on
// its own threads and every method that can take more than a millisecond returns a Promise.
import type { BackendChoice, BackendSelection, GpuPlacement } from './gpu.js';

export const DTYPES = [
  'float64',
  'float32',
  'float16',
  'int64',
  'int32',
  'int16',
  'int8',
  'uint64',
  'uint32',
  'uint16',
  'uint8',
  'bool',
] as const;
export type DType = (typeof DTYPES)[number];

export const ITEM_SIZE: Readonly<Record<DType, number>> = {
  float64: 8,
  float32: 4,
  float16: 2,
  int64: 8,
  int32: 4,
  int16: 2,
  int8: 1,
  uint64: 8,
  uint32: 4,
  uint16: 2,
  uint8: 1,
  bool: 1,
};

export type LayoutName = 'row_major' | 'interleaved';

/**
 * A tensor train. Core k is row-major with shape [ranks[k], modes[k], ranks[k + 1]];
 * ranks has modes.length + 1 entries, the first and last 1. Float32Array cores are stored as
 * float32 (half the bytes); arithmetic is float64 either way. All cores share one element type.
 */
export interface TensorTrain {
  modes: number[];
  ranks: number[];
  cores: Float32Array[] | Float64Array[];
}

/** CONTRACT.md section 3: x the reference as float64, y the reconstruction cast to its dtype. */
export interface Fingerprint {
  frobenius_error: number;
  max_abs_error: number;
  relative_error: number;
}

export interface CompressOptions {
  /** Relative Frobenius error target, 0 <= tolerance < 1. */
  tolerance: number;
  /** Cap on every bond dimension (1..4096); omitted: no cap. */
  maxRank?: number;
  /** Omitted: the engine's choice for the shape (layoutFor). */
  layout?: LayoutName;
  /**
   * The input's values already converted to float64 in C order (numel of them), e.g. while an upload
   * arrived: the first sweep takes them as its workspace, overwriting them, instead of converting the
   * input. row_major layouts only (their mode order is C order). Fingerprints are still measured
   * against `data`.
   */
  gathered?: Float64Array;
  /**
   * The sum of the squares of `gathered`'s values, when the caller took it while converting (widen's
   * lanes, added in lane order): spares the sweep that pass. It sets the truncation threshold, so it
   * must be that sum; NaN or Inf (a non-finite value) makes the engine convert the input itself.
   */
  gatheredSumSquares?: number;
}

export interface CompressResult {
  tt: TensorTrain;
  layout: LayoutName;
  /** Measured against the input after the cast back to its dtype. */
  fingerprint: Fingerprint;
  /** Bytes of the cores as stored (4 or 8 per element). */
  storedCoreBytes: number;
  /** storedCoreBytes < original bytes. */
  compressible: boolean;
}

export interface EngineInfo {
  version: string;
  backend: 'cpu' | 'cuda';
  blas: string;
  threads: number;
  cudaDevices: number;
  /** The addon was built with the CUDA backend (nvcc found); absent: no. */
  cudaCompiled?: boolean;
}

/**
 * Raw little-endian element bytes of a C-order array of `dtype` (any offset; no alignment needed).
 * Buffer and every TypedArray qualify; the bytes are read in place, never copied.
 */
export type ArrayBytes = ArrayBufferView;

/** Query metrics (SPEC.md): cosine in [-1, 1], euclidean >= 0, dot unbounded. */
export const METRICS = ['cosine', 'euclidean', 'dot'] as const;
export type Metric = (typeof METRICS)[number];

/**
 * Query operands held in native memory under numeric ids (safe integers), so that scoring many
 * candidates passes one Float64Array of ids. The pool holds and counts; which ids stay is the caller's
 * policy. Adds copy (trains) or gather into mode order as float64 (dense arrays) off the event loop.
 */
export interface OperandPool {
  /**
   * Holds a copy of the train's cores under `id` (replacing what was there); resolves to the bytes
   * held. With `modes` (another row_major split of the same array, e.g. the engine's for its shape)
   * the train is resplit into them first (Engine.trainWork's `resplit` is the cost).
   */
  addTrain(id: number, tt: TensorTrain, modes?: number[]): Promise<number>;
  /** Holds an uncompressed array (any dtype, C order) in mode order of `layout`; rejects on NaN/Inf. */
  addDense(id: number, data: ArrayBytes, dtype: DType, shape: number[], layout: LayoutName): Promise<number>;
  remove(id: number): boolean;
  has(id: number): boolean;
  /** Operands held and their bytes (native memory). */
  stats(): { entries: number; bytes: number };
  /** ||operand||_2 from the same contractions the scores use. */
  norm(id: number): Promise<number>;
  /**
   * The metric of operand `queryId` against every id in one asynchronous call (parallel over
   * candidates); `norms[j]` is the norm of ids[j]. Rejects when an id is not held or modes differ.
   */
  score(queryId: number, queryNorm: number, ids: Float64Array, norms: Float64Array, metric: Metric): Promise<Float64Array>;
  /**
   * What score() would spend on each id, in multiply-adds, from the operands' modes and ranks alone
   * (about a millisecond per 10k ids, off the main thread; 0 where the modes differ from the
   * query's). Rejects when an id is not held.
   */
  scoreWork(queryId: number, ids: Float64Array, metric: Metric): Promise<Float64Array>;
}

/**
 * What a train of given modes and ranks costs the engine, from its header alone, in multiply-adds:
 * its self contraction (the norm), a dense rebuild, and a resplit into `target` modes plus the self
 * contraction there (zero when the modes are the target's). `resplitElements`: the values it holds
 * in the target modes (zero likewise).
 */
export interface TrainWork {
  contraction: number;
  reconstruction: number;
  resplit: number;
  resplitElements: number;
  /** The largest of the three works. */
  max: number;
  /** Each within the engine's bounds (src/engine/limits.ts): MAX_TRAIN_WORK, a rebuild also MAX_REBUILD_WORK_PER_VALUE per value. */
  withinLimits: boolean;
}

/**
 * A part of an array to read (native/core/include/ttstore/selection.hpp): `level[a]` averages 2^level[a]
 * consecutive cells of axis a (absent: none); then `region`, one normalised NumPy slice [start, stop,
 * step] per axis of the coarse grid, or `points`, n rows of one coarse index per axis, row after row.
 */
export interface Selection {
  level?: number[];
  region?: Array<[number, number, number]>;
  points?: Float64Array;
}

/** What a selection returns (its shape, [n] for points) and what it costs in multiply-adds. */
export interface SelectionPlan {
  shape: number[];
  work: number;
}

/** A value of a simulation param (CONTRACT.md section 6): JSON scalars only. */
export type SimParams = Record<string, number | string | boolean>;

/**
 * One output array of a simulation: float64, C order, 2-D arrays indexed [x, y]. A QTT-native
 * solver gives the field as its train instead (`tt` over `layout`, `data` empty): stored as cores,
 * never made dense.
 */
export interface SimField {
  name: string;
  shape: number[];
  data: Float64Array;
  tt?: TensorTrain;
  layout?: LayoutName;
}

/** The final fields and scalar facts (every solver reports `steps` and `t`; others per solver). */
export interface SimOutput {
  fields: SimField[];
  stats: Record<string, number>;
}

export interface SimHooks {
  /** done <= total; total may be re-estimated as the run goes; calls are coalesced, the last has done === total. */
  onProgress?(done: number, total: number): void;
  /** Every params.snapshot_every steps; the arrays are the caller's to keep. */
  onSnapshot?(step: number, t: number, fields: SimField[]): void;
  /** The run stopped at a step boundary after pause() and holds its state until resume() or cancel(). */
  onPaused?(): void;
}

/**
 * A simulation in flight on a thread of the addon's own (never libuv's pool). `result` rejects with
 * code ERR_TTS_INVALID for bad params, ERR_TTS_CANCELLED after cancel(), or with whatever a hook threw
 * (which stops the run). cancel() is a no-op once the run has ended, and wakes a paused run. pause()
 * stops the run at its next poll (a fraction of a second of solver work away, inside a step or not),
 * which then calls onPaused; resume() lets it go on from where it stopped.
 */
export interface SimRun {
  result: Promise<SimOutput>;
  cancel(): void;
  pause(): void;
  resume(): void;
}

/** One param of a solver as the engine checks it (its table, native/core): the HTTP schema is built from these. */
export type SimParamSpec = {
  name: string;
  required: boolean;
  description: string;
} & (
  | { type: 'integer' | 'number'; minimum: number; maximum: number; exclusiveMinimum: boolean; exclusiveMaximum: boolean; default?: number }
  | { type: 'choice'; choices: string[]; default: string }
  | { type: 'list'; maxItems: number }
);

/** Every solver's params, and the limits they share. */
export interface SimParamTables {
  solvers: Record<string, SimParamSpec[]>;
  limits: { maxSteps: number; maxSnapshots: number };
}

export interface Engine {
  info(): EngineInfo;
  /** The engine's layout choice for a shape and the mode sizes it gives (cheap, synchronous). */
  layoutFor(shape: number[], layout?: LayoutName): { layout: LayoutName; modes: number[] };
  /**
   * The work of a train of these modes and ranks, and of bringing it into `target` modes (another
   * row_major split of the same size); synchronous, O(number of modes). Throws a RangeError
   * (ERR_TTS_INVALID) when the ranks do not chain or the sizes differ.
   */
  trainWork(modes: number[], ranks: number[], target: number[]): TrainWork;

  /** QTT-SVD + float32/float64 core choice + measured fingerprint. Rejects on NaN/Inf input. */
  compress(data: ArrayBytes, dtype: DType, shape: number[], opts: CompressOptions): Promise<CompressResult>;

  /**
   * compress()'s first step done ahead, piece by piece: `src`'s elements (a whole number of `dtype`)
   * as float64 into dst[dstOffset, ...), off the event loop. An input converted this way in C order
   * is compress()'s `gathered`. With `lanes` (16 running sums), the square of element i of the piece
   * is added to lanes[(dstOffset + i) mod 16]: pieces converted in order give lanes whose total (in
   * lane order) has the same bits however the input was cut, compress()'s `gatheredSumSquares`.
   */
  widen(src: ArrayBytes, dtype: DType, dst: Float64Array, dstOffset: number, lanes?: Float64Array): Promise<void>;

  /**
   * Dense C-order array of `dtype` (integers rounded half to even and saturated, bool >= 0.5) as raw
   * bytes; with `reference`, the fingerprint against it is measured in the same pass. With `out`
   * (exactly numel * item size bytes, not overlapping `reference`) the array is written into it and
   * `data` is `out`; otherwise into a fresh buffer.
   */
  reconstruct(
    tt: TensorTrain,
    shape: number[],
    layout: LayoutName,
    dtype: DType,
    reference?: ArrayBytes,
    out?: Uint8Array,
  ): Promise<{ data: Uint8Array; fingerprint?: Fingerprint }>;

  /**
   * Checks a selection against a shape (RangeError, ERR_TTS_INVALID, naming the axis or point) and
   * estimates its work: on a train of these modes, ranks and layout, or on a dense array when `train`
   * is absent. Synchronous, O(points + modes), no array data.
   */
  selection(shape: number[], selection: Selection, train?: { modes: number[]; ranks: number[]; layout: LayoutName }): SelectionPlan;

  /**
   * The selected values of the train, C order over the selection's shape, in `dtype` (cast as
   * reconstruct casts), computed on the cores: about the output's size times r^2, never the array's.
   */
  reconstructSelection(tt: TensorTrain, shape: number[], layout: LayoutName, dtype: DType, selection: Selection): Promise<Uint8Array>;

  /** The same selection of a dense C-order array of `dtype` (read in place); off-thread. */
  selectDense(data: ArrayBytes, dtype: DType, shape: number[], selection: Selection): Promise<Uint8Array>;

  /** Fingerprint of tt against `reference` (of `dtype`), without materialising the array. */
  fingerprint(tt: TensorTrain, shape: number[], layout: LayoutName, reference: ArrayBytes, dtype: DType): Promise<Fingerprint>;

  norm(a: TensorTrain): Promise<number>;
  /** Engine (OpenMP/BLAS) threads; 0: one per core. */
  setThreads?(n: number): void;
  /** Names of the grid solvers (CONTRACT.md section 6), sorted; synchronous. */
  solvers(): string[];
  /** Starts a solver run; params are checked before anything runs (see SimRun for the outcomes). */
  simulate(solver: string, params: SimParams, hooks?: SimHooks): SimRun;
  /** The checks simulate() makes, alone: throws a RangeError (ERR_TTS_INVALID) naming the param; synchronous, microseconds. */
  checkSimulation(solver: string, params: SimParams): void;
  /** The solvers' param tables (synchronous). */
  solverParams(): SimParamTables;
  /** A new, empty operand pool for the query feature. */
  createOperandPool(): OperandPool;
  /** Backend choice at start (src/engine/gpu.ts); absent on engines without one. */
  selectBackend?(choice: BackendChoice): BackendSelection;
  /** GPU core placement (serve target gpu); absent on engines without it. */
  gpu?: GpuPlacement;
}

/**
 * Test-only: the core's contractions and rounding through the addon, which no service calls (a put
 * takes the norm, queries score in an OperandPool). The engine tests (test/engine) check the core's
 * algebra through them; they stay outside Engine so that no service comes to depend on them.
 */
export interface EngineTestCalls {
  dot(a: TensorTrain, b: TensorTrain): Promise<number>;
  distance(a: TensorTrain, b: TensorTrain): Promise<number>;
  /** <q, c_j> for every candidate in one asynchronous call. */
  dotBatch(q: TensorTrain, candidates: TensorTrain[]): Promise<Float64Array>;
  /** TT rounding to a tolerance and rank cap; result cores are Float64Array. */
  round(tt: TensorTrain, opts: { tolerance: number; maxRank?: number }): Promise<TensorTrain>;
}
