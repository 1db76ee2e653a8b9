// GPU core placement and the backend choice (CUDA builds; see native/addon/gpu.cpp). The types are
// plain data; `engine.gpu` implements GpuPlacement over the addon.
import type { TensorTrain } from './types.js';

/** SVC_GATE_ENGINE_BACKEND: auto (CUDA when a device is usable, else CPU), cpu, or cuda (required). */
export const BACKEND_CHOICES = ['auto', 'cpu', 'cuda'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

export interface BackendSelection {
  backend: 'cpu' | 'cuda';
  cudaDevices: number;
  /** Why no device is usable ('' when one is). */
  reason: string;
}

/** Why a placement was refused: the HTTP edge maps these to 501, 503 and 400. */
export type GpuRefusal = 'gpu_unsupported' | 'gpu_unavailable' | 'invalid_device';

export interface GpuPlaced {
  /** The entry's cores were already on that device (now most recently used). */
  residentBefore: boolean;
  /** Device bytes its cores take. */
  bytes: number;
  /** Other entries evicted (least recently used first) to make room under the budget. */
  evicted: number;
}

export interface GpuStats {
  entries: number;
  bytes: number;
  budgetBytes: number;
  evictions: number;
}

/** Thrown by place() when the device cannot take the cores; `refusal` says why. */
export class GpuPlacementError extends Error {
  constructor(
    readonly refusal: GpuRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'GpuPlacementError';
  }
}

export interface GpuPlacement {
  /** Copies the train's cores to device `device` under `id` (an entry id), within the byte budget (LRU). */
  place(device: number, id: number, tt: TensorTrain): Promise<GpuPlaced>;
  evict(id: number): boolean;
  resident(device: number, id: number): boolean;
  /** Byte budget per device (SVC_GATE_GPU_CACHE_BYTES); shrinking it evicts at once. */
  setBudget(bytes: number): void;
  stats(device: number): GpuStats;
}
