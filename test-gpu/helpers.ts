// Shared by the GPU tests: whether this machine has a usable CUDA device, and why not. Without one
// every GPU test is reported as skipped (pending), and the reason is printed once.
import { engine } from '../src/engine/index.js';

export interface GpuAvailability {
  usable: boolean;
  devices: number;
  reason: string;
}

let cached: GpuAvailability | undefined;

export function gpuAvailability(): GpuAvailability {
  if (cached) return cached;
  const info = engine.info();
  if (!info.cudaCompiled) {
    cached = { usable: false, devices: 0, reason: 'the addon was built without CUDA (no nvcc at build time)' };
  } else {
    const sel = engine.selectBackend!('auto');
    cached = { usable: sel.backend === 'cuda', devices: sel.cudaDevices, reason: sel.reason || 'no usable CUDA device' };
  }
  return cached;
}

let announced = false;

/** Call from a `before` hook: skips the suite (every test shows as pending) when no device is usable. */
export function requireGpu(ctx: Mocha.Context): void {
  const g = gpuAvailability();
  if (g.usable) return;
  if (!announced) {
    announced = true;
    console.log(`\n    GPU tests SKIPPED: ${g.reason}\n`);
  }
  ctx.skip();
}

/** A smooth field (sum of a few waves), deterministic. */
export function smoothField(n: number, freq = 40): Float64Array {
  const x = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const u = t / n;
    x[t] = Math.sin(freq * u) + 0.5 * Math.cos(3.1 * freq * u * u) + Math.exp(-u);
  }
  return x;
}

export function relDiff(a: number, b: number): number {
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-300);
}
