// npm run bench:gpu — the CUDA backend against baselines measured in the same run, on device 0:
//   1. QTT-SVD of 2^26- and 2^28-element float32 smooth fields (256 MiB, 1 GiB): already in device memory, and coming
//      from host memory (upload included), against the CPU backend (engine.compress, which adds the
//      float32 check's fingerprint) and a textbook TT-SVD in PyTorch on the same GPU
//      (bench/ttsvd_torch.py); GB/s = input bytes / seconds. Printed beside them: the device-to-device
//      and host-to-device copy bandwidths measured now.
//      Bars: device-resident >= 100 GB/s and >= 5x PyTorch; from host >= 50% of the H2D bandwidth.
//   2. top-K scoring of one query against 100,000 device-resident candidates (random trains, 28 modes
//      of 2, ranks <= 8) against the CPU backend on the same operand pool; bar: >= 20x.
// Needs a CUDA build and a usable device; without one it says so and exits 1.
// BENCH_GPU_LOG2 (sizes as a comma list, default 26,28) and BENCH_GPU_CANDIDATES (default 100000) change
// the run; the bars hold only for a run that includes 2^28 and 100,000 candidates.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeNpyHeader } from '../src/codec/npy.js';
import { engine, native, packageRoot, type TensorTrain } from '../src/engine/index.js';

const SIZES = (process.env.BENCH_GPU_LOG2 ?? '26,28').split(',').map(Number);
const CANDIDATES = Number(process.env.BENCH_GPU_CANDIDATES ?? 100000);
const FULL = SIZES.includes(28) && CANDIDATES === 100000;
const TOL = 1e-6;
const PYTHON = process.env.BENCH_GPU_PYTHON ?? 'python3'; // the GPU machine's python with torch

const fmt = (x: number, d = 1) => x.toFixed(d);
const bar = (ok: boolean) => (ok ? 'PASS' : 'FAIL');

/** A smooth 2^(log2/2) x 2^(log2/2) field, flattened in C order (separable terms: fast to build). */
function smoothField(log2: number): Float32Array {
  const side = 2 ** Math.floor(log2 / 2);
  const rows = 2 ** log2 / side;
  const fx = (i: number, n: number) => i / n;
  const ax = new Float64Array(rows),
    bx = new Float64Array(rows),
    cx = new Float64Array(rows);
  const ay = new Float64Array(side),
    by = new Float64Array(side),
    cy = new Float64Array(side);
  for (let i = 0; i < rows; i++) {
    const x = fx(i, rows);
    ax[i] = Math.sin(6 * x);
    bx[i] = Math.exp(-4 * (x - 0.5) ** 2);
    cx[i] = Math.cos(17 * x * x);
  }
  for (let j = 0; j < side; j++) {
    const y = fx(j, side);
    ay[j] = Math.cos(5 * y);
    by[j] = Math.exp(-3 * (y - 0.3) ** 2);
    cy[j] = Math.sin(11 * y);
  }
  const out = new Float32Array(rows * side);
  for (let i = 0; i < rows; i++) {
    const o = i * side;
    for (let j = 0; j < side; j++) out[o + j] = ax[i]! * ay[j]! + 0.5 * bx[i]! * by[j]! + 0.25 * cx[i]! * cy[j]!;
  }
  return out;
}

function randomTrain(d: number, maxRank: number, seed: number): TensorTrain {
  let s = seed >>> 0 || 1;
  const r = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296 - 0.5;
  };
  const ranks = [1];
  for (let k = 1; k < d; k++) ranks.push(Math.min(maxRank, 2 ** Math.min(k, d - k)));
  ranks.push(1);
  const cores = ranks.slice(0, d).map((r0, k) => Float32Array.from({ length: r0 * 2 * ranks[k + 1]! }, r));
  return { modes: new Array(d).fill(2), ranks, cores };
}

/** QTT-SVD of a 2^log2 float32 field: device-resident, from host, the CPU backend and PyTorch. */
async function qttSvd(log2: number, threads: number): Promise<void> {
  const dev = native().gpu;
  console.log(`\nQTT-SVD of a 2^${log2} float32 field (${2 ** (log2 - 20) * 4} MiB)`);
  const field = smoothField(log2);
  const bytes = field.byteLength;
  const copy = await dev.copyBandwidth(0, bytes);
  console.log(
    `copy bandwidth: device-to-device ${fmt(copy.d2d)} GB/s, host-to-device ${fmt(copy.h2d)} GB/s (pinned), device-to-host ${fmt(copy.d2h)} GB/s`,
  );

  const shape = [2 ** log2];
  const resident = await dev.timedQttSvd(field, shape, { tolerance: TOL }, 0, true);
  const fromHost = await dev.timedQttSvd(field, shape, { tolerance: TOL }, 0, false);
  const gbps = (s: number) => bytes / s / 1e9;
  const maxRank = (r: number[]) => Math.max(...r);
  console.log(
    `gpu device-resident : ${fmt(resident.seconds * 1e3, 2)} ms  ${fmt(gbps(resident.seconds))} GB/s  max rank ${maxRank(resident.ranks)}  rel. error ${resident.relativeError.toExponential(2)}`,
  );
  console.log(
    `gpu from host       : ${fmt(fromHost.seconds * 1e3, 2)} ms  ${fmt(gbps(fromHost.seconds))} GB/s  max rank ${maxRank(fromHost.ranks)}  rel. error ${fromHost.relativeError.toExponential(2)}`,
  );

  native().setBackend('cpu');
  const t0 = process.hrtime.bigint();
  const cpu = await engine.compress(field, 'float32', shape, { tolerance: TOL, layout: 'row_major' });
  const cpuS = Number(process.hrtime.bigint() - t0) / 1e9;
  native().setBackend('cuda');
  console.log(
    `cpu backend compress: ${fmt(cpuS * 1e3, 1)} ms  ${fmt(gbps(cpuS), 2)} GB/s  max rank ${maxRank(cpu.tt.ranks)}  rel. error ${cpu.fingerprint.relative_error.toExponential(2)} (${threads} threads; includes the float32 fingerprint)`,
  );

  let torchGbps = NaN;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-bench-gpu-'));
  try {
    const file = path.join(dir, 'field.npy');
    await writeFile(file, Buffer.concat([encodeNpyHeader('float32', shape), Buffer.from(field.buffer, field.byteOffset, bytes)]));
    const py = spawnSync(PYTHON, [path.join(packageRoot(), 'bench', 'ttsvd_torch.py'), file, String(TOL), 'float32'], { encoding: 'utf8' });
    const line = (py.stdout ?? '').trim().split('\n').pop() ?? '';
    const t = line
      ? (JSON.parse(line) as {
          error?: string;
          seconds: number;
          gbps: number;
          ranks: number[];
          relative_error: number;
          device: string;
          drivers: string[];
        })
      : undefined;
    if (!t || t.error) {
      console.log(`torch TT-SVD        : not measured (${t?.error ?? py.error?.message ?? py.stderr?.trim() ?? 'no output'})`);
    } else {
      torchGbps = t.gbps;
      console.log(
        `torch TT-SVD        : ${fmt(t.seconds * 1e3, 1)} ms  ${fmt(t.gbps, 2)} GB/s  max rank ${maxRank(t.ranks)}  rel. error ${t.relative_error.toExponential(2)} (${t.device}, float32, device-resident, torch.linalg.svd driver ${t.drivers.join('/')})`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const residentGbps = gbps(resident.seconds);
  if (log2 !== 28) console.log('  (the bars below are set for 2^28)');
  console.log(`  device-resident ${fmt(residentGbps)} GB/s (bar 100): ${bar(residentGbps >= 100)}`);
  console.log(`  vs torch ${fmt(residentGbps / torchGbps, 1)}x (bar 5x): ${bar(residentGbps >= 5 * torchGbps)}`);
  console.log(
    `  from host ${fmt(gbps(fromHost.seconds))} GB/s = ${fmt((100 * gbps(fromHost.seconds)) / copy.h2d, 0)}% of H2D (bar 50%): ${bar(gbps(fromHost.seconds) >= 0.5 * copy.h2d)}`,
  );
  console.log(`  vs cpu backend ${fmt(cpuS / resident.seconds, 1)}x (device-resident), ${fmt(cpuS / fromHost.seconds, 1)}x (from host)`);
}

async function main(): Promise<void> {
  const info = engine.info();
  if (!info.cudaCompiled) {
    console.error('bench:gpu: this addon was built without CUDA (no nvcc at build time); nothing to measure');
    process.exit(1);
  }
  const sel = engine.selectBackend!('auto');
  if (sel.backend !== 'cuda') {
    console.error(`bench:gpu: no usable CUDA device (${sel.reason}); run it on a GPU machine`);
    process.exit(1);
  }
  console.log(`bench:gpu on cuda:0 (${sel.cudaDevices} device(s)), fields 2^${SIZES.join(', 2^')} float32, tolerance ${TOL}`);

  for (const log2 of SIZES) await qttSvd(log2, info.threads);

  // 2. top-K over resident candidates ----------------------------------------------------------
  const dev = native().gpu;
  const d = 28;
  const pool = engine.createOperandPool();
  const q = randomTrain(d, 8, 7);
  await pool.addTrain(-1, q);
  const ids = new Float64Array(CANDIDATES);
  for (let j = 0; j < CANDIDATES; j++) {
    const c = randomTrain(d, 2 + (j % 7), 1000 + j);
    await pool.addTrain(j + 1, c);
    const placed = await dev.place(0, j + 1, c);
    if ('error' in placed) throw new Error(`placement failed: ${placed.message}`);
    ids[j] = j + 1;
  }
  const norms = new Float64Array(CANDIDATES).fill(1);
  const time = async (backend: 'cpu' | 'cuda') => {
    native().setBackend(backend);
    const ts: number[] = [];
    let scores: Float64Array = new Float64Array(0);
    for (let rep = 0; rep < 5; rep++) {
      const s = process.hrtime.bigint();
      scores = await pool.score(-1, 1, ids, norms, 'dot');
      ts.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
    native().setBackend('auto');
    return { ms: ts.sort((a, b) => a - b)[2]!, scores };
  };
  const cpuK = await time('cpu');
  const gpuK = await time('cuda');
  let worst = 0;
  for (let j = 0; j < CANDIDATES; j++)
    worst = Math.max(worst, Math.abs(gpuK.scores[j]! - cpuK.scores[j]!) / Math.max(1e-300, Math.abs(cpuK.scores[j]!)));
  console.log(
    `top-K scoring, ${CANDIDATES} resident candidates (ranks 2..8, ${d} cores): gpu ${fmt(gpuK.ms, 2)} ms, cpu backend ${fmt(cpuK.ms, 2)} ms (${info.threads} threads): ${fmt(cpuK.ms / gpuK.ms, 1)}x (bar 20x): ${bar(cpuK.ms >= 20 * gpuK.ms)}; worst relative difference ${worst.toExponential(1)}`,
  );
  if (!FULL) console.log('(a reduced run: no 2^28 field or fewer candidates; the bars are indicative only)');
}

main().catch((err) => {
  console.error(`bench:gpu failed: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
