// The raw shape of the compiled addon (native/addon). Only src/engine talks to it; everything else
// goes through `engine` (index.ts), which adds the types and turns synchronous throws into rejections.
import type {
  ArrayBytes,
  CompressOptions,
  CompressResult,
  DType,
  Engine,
  EngineInfo,
  EngineTestCalls,
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

/** The addon's array and train calls, as the typed engine gives them on (index.ts adds no types there). */
type TrainCalls = Pick<Engine, 'widen' | 'reconstruct' | 'fingerprint' | 'selection' | 'reconstructSelection' | 'selectDense' | 'norm'> &
  EngineTestCalls;

export interface NativeAddon extends TrainCalls {
  info(): EngineInfo;
  layoutFor(shape: number[], layout?: LayoutName): { layout: LayoutName; modes: number[] };
  trainWork(modes: number[], ranks: number[], target: number[]): TrainWork;
  /** The bounds of native/core/include/ttstore/limits.hpp. */
  limits: {
    maxRank: number;
    maxTrainWork: number;
    maxRebuildWorkPerValue: number;
    maxTurnWork: number;
    lightTurnWork: number;
    maxSelectionWorkPerValue: number;
  };
  setThreads(n: number): void;
  retainFreedMemory(trimThresholdBytes: number, mmapThresholdBytes: number): boolean;
  compress(data: ArrayBytes, dtype: DType, shape: number[], opts: CompressOptions): Promise<CompressResult>;
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
