// QTT solver benchmark: seconds per step of navier_stokes_2d (Taylor-Green and the double shear
// layer, max_rank 64) and helmholtz_3d (one implicit step) through engine.simulate, beside dense
// baselines run in the same process tree: a pseudo-spectral FFTW Navier-Stokes at 1024² and 2048²
// and a dense CG of the same implicit diffusion step at 256³ (bench/qtt_dense_baselines.cpp,
// compiled here against Debian's libfftw3-dev).
// Run: npm run bench:qtt [-- --quick] [-- --skip-shear]   (--quick: n_bits 9 and 10 only, no 4096^3;
// --skip-shear: no shear layer)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { engine, packageRoot } from '../src/engine/index.js';
import type { SimParams } from '../src/engine/index.js';

const quick = process.argv.includes('--quick');
const skipShear = process.argv.includes('--skip-shear');

/**
 * Seconds per step from the progress callbacks (the run's set-up and first step excluded): the median
 * over the reported intervals after the first step, each interval's time over the steps it spans. A
 * median, not a mean: a Taylor-Green step at 512^2 takes about 20 ms, and one stall of the shared
 * host in a handful of steps would otherwise decide the ratio of two grids.
 */
async function secondsPerStep(
  solver: string,
  params: SimParams,
): Promise<{ perStep: number; total: number; stats: Record<string, number> }> {
  const points: { done: number; t: number }[] = [];
  const t0 = performance.now();
  const run = engine.simulate(solver, params, {
    onProgress(done) {
      if (done >= 1) points.push({ done, t: performance.now() });
    },
  });
  const out = await run.result;
  const total = (performance.now() - t0) / 1000;
  const rates: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const steps = points[i]!.done - points[i - 1]!.done;
    if (steps > 0) rates.push((points[i]!.t - points[i - 1]!.t) / 1000 / steps);
  }
  return { perStep: rates.length > 0 ? median(rates) : total / Number(params.steps), total, stats: out.stats };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function dense(bin: string, args: string[]): Record<string, number> {
  const r = spawnSync(bin, args, { encoding: 'utf8', env: { ...process.env, OMP_NUM_THREADS: String(engine.info().threads) } });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as Record<string, number>;
}

async function main(): Promise<void> {
  const info = engine.info();
  console.log(`bench:qtt  engine ${info.version} (${info.backend}, ${info.blas}, ${info.threads} threads)`);

  const dir = mkdtempSync(path.join(tmpdir(), 'ttstore-qtt-bench-'));
  const bin = path.join(dir, 'dense');
  const cc = spawnSync(
    'g++',
    [
      '-O3',
      '-march=native',
      '-fopenmp',
      '-o',
      bin,
      path.join(packageRoot(), 'bench', 'qtt_dense_baselines.cpp'),
      '-lfftw3_omp',
      '-lfftw3',
      '-lm',
    ],
    { encoding: 'utf8' },
  );
  const haveDense = cc.status === 0;
  if (!haveDense) console.log(`dense baselines unavailable (apt-get install libfftw3-dev): ${cc.stderr.split('\n')[0]}`);

  try {
    console.log('\nnavier_stokes_2d (QTT, max_rank 64), Re 1000, dt = half the explicit stability limit, first steps');
    console.log('initial        grid         s/step   max_rank  divergence');
    const bits = quick ? [9, 10] : [9, 10, 11, 12];
    const perStep: Record<string, Record<number, number>> = { taylor_green: {}, shear_layer: {} };
    for (const initial of ['taylor_green', 'shear_layer'] as const) {
      if (initial === 'shear_layer' && skipShear) continue;
      for (const b of bits) {
        const n = 2 ** b;
        const h = (2 * Math.PI) / n;
        const dt = 0.5 * Math.min(1.7 * h, (2.5 * h * h * 1000) / 8);
        // The shear layer's ranks grow with time (18-25 after 3 steps, the cap of 64 after about 55
        // at 512^2), so its first 3 steps are timed: the cost before saturation.
        const steps = initial === 'taylor_green' ? 16 : 3;
        const r = await secondsPerStep('navier_stokes_2d', { n_bits: b, reynolds: 1000, dt, steps, initial, max_rank: 64 });
        perStep[initial]![b] = r.perStep;
        console.log(
          `${initial.padEnd(14)} ${`${n}^2`.padEnd(12)} ${r.perStep.toFixed(3).padStart(7)}  ${String(r.stats.max_rank).padStart(8)}  ${r.stats.divergence!.toExponential(1)}`,
        );
      }
    }
    for (const initial of ['taylor_green', 'shear_layer'] as const) {
      const t = perStep[initial]!;
      if (t[12] !== undefined) console.log(`${initial} step time 4096^2 / 512^2: ${(t[12] / t[9]!).toFixed(2)}x (bar: <= 3x)`);
    }
    if (haveDense) {
      for (const n of [1024, 2048]) {
        const d = dense(bin, ['ns', String(n), n === 1024 ? '10' : '4']);
        console.log(`dense pseudo-spectral (FFTW) ${n}^2: ${d.seconds_per_step!.toFixed(3)} s/step`);
      }
    }

    console.log('\nhelmholtz_3d (QTT), one implicit step (I - nu dt Lap) u = u_prev, nu 0.5, dt 1e-3');
    console.log("(residual: the solver's worst local residual of the run; a rank cap below what u needs stops it there)");
    console.log('initial   grid        max_rank    tol   s/step  rank used  sweeps  residual');
    // The gaussian needs ranks up to ~190 at 512^3: at max_rank 64 the solve stops at the residual the
    // cap allows (~1.5e-3), at 192 it converges to tol; both are shown.
    const cases: Array<[number, string, number, number]> = [
      [9, 'modes', 64, 1e-8],
      [9, 'gaussian', 64, 1e-5],
      [9, 'gaussian', 192, 1e-5],
      ...(quick
        ? []
        : ([
            [12, 'modes', 64, 1e-8],
            [12, 'gaussian', 64, 1e-5],
          ] as Array<[number, string, number, number]>)),
    ];
    for (const [b, initial, maxRank, tol] of cases) {
      const r = await secondsPerStep('helmholtz_3d', {
        n_bits: b,
        nu: 0.5,
        dt: 1e-3,
        steps: 3,
        initial,
        tol,
        max_rank: maxRank,
        ...(initial === 'modes'
          ? {
              modes: JSON.stringify([
                [1, 2, 3, 1.0],
                [4, 1, 2, 0.5],
              ]),
            }
          : {}),
      });
      const converged = r.stats.residual! <= tol;
      console.log(
        `${initial.padEnd(9)} ${`${2 ** b}^3`.padEnd(10)} ${String(maxRank).padStart(8)} ${tol.toExponential(0).padStart(6)} ${r.perStep.toFixed(3).padStart(8)}  ${String(r.stats.max_rank).padStart(9)}  ${String(r.stats.sweeps).padStart(6)}  ${r.stats.residual!.toExponential(1)}${converged ? '' : ' (capped)'}`,
      );
      if (b === 9 && initial === 'gaussian' && converged)
        console.log(`  converged gaussian step at 512^3: ${r.perStep.toFixed(2)} s (bar: <= 2 s)`);
    }
    if (haveDense) {
      const d = dense(bin, ['cg', '256', '0.0005']);
      console.log(`dense CG, same step at 256^3: ${d.seconds!.toFixed(3)} s (${d.iterations} iterations)`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
