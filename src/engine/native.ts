// The raw shape of the compiled addon (native/addon). Only src/engine talks to it; everything else
// goes through `engine` (index.ts), which adds the types and turns synchronous throws into rejections.
import type {
  ArrayBytes,
  CompressResult,
  DType,
  EngineInfo,
  Fingerprint,
  LayoutName,
  OperandPool,
  SimField,
  SimOutput,
  SimParams,
  SimParamTables,
  TensorTrain,
  TrainWork,
} from './types.js';
import type { BackendChoice, BackendSelection, GpuPlaced, GpuRefusal, GpuStats } from './gpu.js';

export interface NativeAddon {
  info(): EngineInfo;
  layoutFor(shape: number[], layout?: LayoutName): { layout: LayoutName; modes: number[] };
  trainWork(modes: number[], ranks: number[], target: number[]): TrainWork;
  /** The bounds of native/core/include/ttstore/limits.hpp. */
  limits: { maxRank: number; maxTrainWork: number; maxRebuildWorkPerValue: number; maxTurnWork: number; lightTurnWork: number };
  setThreads(n: number): void;
  retainFreedMemory(trimThresholdBytes: number, mmapThresholdBytes: number): boolean;
  compress(
    data: ArrayBytes,
    dtype: DType,
    shape: number[],
    opts: { tolerance: number; maxRank?: number; layout?: LayoutName; gathered?: Float64Array; gatheredSumSquares?: number },
  ): Promise<CompressResult>;
  widen(src: ArrayBytes, dtype: DType, dst: Float64Array, dstOffset: number, lanes?: Float64Array): Promise<void>;
  reconstruct(
    tt: TensorTrain,
    shape: number[],
    layout: LayoutName,
    dtype: DType,
    reference?: ArrayBytes,
    out?: Uint8Array,
  ): Promise<{ data: Uint8Array; fingerprint?: Fingerprint }>;
  fingerprint(tt: TensorTrain, shape: number[], layout: LayoutName, reference: ArrayBytes, dtype: DType): Promise<Fingerprint>;
  dot(a: TensorTrain, b: TensorTrain): Promise<number>;
  norm(a: TensorTrain): Promise<number>;
  distance(a: TensorTrain, b: TensorTrain): Promise<number>;
  dotBatch(q: TensorTrain, candidates: TensorTrain[]): Promise<Float64Array>;
  round(tt: TensorTrain, opts: { tolerance: number; maxRank?: number }): Promise<TensorTrain>;
  solvers(): string[];
  /** Throws synchronously (code ERR_TTS_INVALID) on bad arguments; the hooks run on the main thread. */
  simulate(
    solver: string,
    params: SimParams,
    onProgress?: (done: number, total: number) => void,
    onSnapshot?: (step: number, t: number, fields: SimField[]) => void,
    onPaused?: () => void,
  ): { result: Promise<SimOutput>; cancel(): void; pause(): void; resume(): void };
  /** Throws synchronously (RangeError, code ERR_TTS_INVALID) naming the first bad param. */
  checkSimulation(solver: string, params: SimParams): void;
  solverParams(): SimParamTables;
  OperandPool: new () => OperandPool;
  /** Throws (code ERR_TTS_GPU_UNAVAILABLE / ERR_TTS_GPU_UNSUPPORTED) for 'cuda' without a usable device. */
  setBackend(choice: BackendChoice): BackendSelection;
  gpu: {
    place(device: number, id: number, tt: TensorTrain): Promise<GpuPlaced | { error: GpuRefusal; message: string }>;
    evict(id: number): boolean;
    resident(device: number, id: number): boolean;
    setBudget(bytes: number): void;
    stats(device: number): GpuStats;
    copyBandwidth(device: number, bytes: number): Promise<{ h2d: number; d2h: number; d2d: number }>;
    timedQttSvd(
      data: Float32Array,
      shape: number[],
      opts: { tolerance: number; maxRank?: number },
      device: number,
      resident: boolean,
    ): Promise<{ seconds: number; relativeError: number; ranks: number[] }>;
  };
}
