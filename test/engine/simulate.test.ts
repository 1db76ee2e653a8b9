import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { ENGINE_CANCELLED, ENGINE_INVALID, engine, packageRoot } from '../../src/engine/index.js';
import type { SimField, SimOutput } from '../../src/engine/index.js';
import { ticksDuring } from './helpers.js';

// Runs an ES module snippet in a fresh node (with `engine` imported) and resolves with its exit code,
// stdout and how long it took; rejects if it has not exited after `limitMs`.
function runNode(body: string, limitMs: number): Promise<{ code: number | null; out: string; ms: number }> {
  const index = pathToFileURL(path.join(packageRoot(), 'dist', 'src', 'engine', 'index.js')).href;
  const src = `import { engine } from ${JSON.stringify(index)};\n${body}`;
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--input-type=module', '-e', src], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running after ${limitMs} ms; stdout: ${out}`));
    }, limitMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, ms: performance.now() - t0 });
    });
  });
}

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

function field(out: SimOutput, name: string): SimField {
  const f = out.fields.find((x) => x.name === name);
  if (!f) throw new Error(`no field ${name}`);
  return f;
}

// ||f + Δ_h u|| / ||f|| with the 5-point stencil, zero outside the grid (independent of the engine).
function relativeResidual(u: Float64Array, f: Float64Array, n: number): number {
  const h = 1 / (n + 1);
  const at = (i: number, j: number): number => (i < 0 || j < 0 || i >= n || j >= n ? 0 : u[i * n + j]!);
  let r2 = 0;
  let f2 = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const au = (4 * at(i, j) - at(i - 1, j) - at(i + 1, j) - at(i, j - 1) - at(i, j + 1)) / (h * h);
      r2 += (f[i * n + j]! - au) ** 2;
      f2 += f[i * n + j]! ** 2;
    }
  }
  return Math.sqrt(r2 / f2);
}

describe('engine: simulate', function () {
  it('lists the solvers', function () {
    expect(engine.solvers()).to.include('poisson_2d');
    expect([...engine.solvers()].sort()).to.deep.equal(engine.solvers());
  });

  it('poisson_2d at n_bits 9 reports progress while it runs and leaves the event loop free', async function () {
    const progress: [number, number][] = [];
    let settled = false;
    let progressBeforeSettle = 0;
    const run = engine.simulate(
      'poisson_2d',
      { n_bits: 9, rhs: 'gaussians', preconditioner: 'none', tol: 1e-8, seed: 3 },
      {
        onProgress(done, total) {
          progress.push([done, total]);
          if (!settled) progressBeforeSettle += 1;
        },
      },
    );
    const {
      result: out,
      ticks,
      maxGapMs,
      ms,
    } = await ticksDuring(() =>
      run.result.finally(() => {
        settled = true;
      }),
    );
    const iterations = out.stats.iterations!;
    expect(iterations).to.be.greaterThan(100);
    expect(out.stats.residual).to.be.at.most(1e-8);
    expect(out.stats.converged).to.equal(1);
    // Progress arrived while the run was in flight, in order, ending at done === total === iterations.
    expect(progressBeforeSettle, `${progress.length} progress calls`).to.be.at.least(3);
    for (let k = 1; k < progress.length; k++) expect(progress[k]![0]).to.be.at.least(progress[k - 1]![0]);
    for (const [d, t] of progress) expect(d).to.be.at.most(t);
    expect(progress.at(-1)).to.deep.equal([iterations, iterations]);
    expect(ticks, `${ticks} ticks in ${ms.toFixed(0)} ms`).to.be.at.least(Math.min(ms / 4, 50));
    // A blocked loop would show one gap as long as the run; 100 ms leaves room for a shared 2-core machine.
    expect(maxGapMs, `longest gap ${maxGapMs.toFixed(1)} ms over ${ms.toFixed(0)} ms`).to.be.below(100);
    // The fields: u and f over 512 x 512, and the reported residual is the one u really has.
    const u = field(out, 'u');
    const f = field(out, 'f');
    expect(u.shape).to.deep.equal([512, 512]);
    expect(f.shape).to.deep.equal([512, 512]);
    expect(u.data).to.be.instanceOf(Float64Array);
    expect(u.data.length).to.equal(512 * 512);
    const r = relativeResidual(u.data, f.data, 512);
    expect(Math.abs(r - out.stats.residual!) / r).to.be.below(1e-6);
  });

  it('multigrid-preconditioned poisson_2d converges in a few iterations to the manufactured solution', async function () {
    const out = await engine.simulate('poisson_2d', { n_bits: 9 }).result;
    expect(out.stats.iterations).to.be.at.most(12);
    const h = 1 / 513;
    expect(out.stats.max_error).to.be.closeTo((Math.PI ** 2 * h * h) / 12, (0.1 * (Math.PI ** 2 * h * h)) / 12);
    const u = field(out, 'u').data;
    const i = 200;
    const j = 300;
    expect(u[i * 512 + j]).to.be.closeTo(Math.sin(Math.PI * (i + 1) * h) * Math.sin(Math.PI * (j + 1) * h), 1e-5);
  });

  it('hands snapshots of u to onSnapshot every snapshot_every iterations', async function () {
    const steps: number[] = [];
    const out = await engine.simulate(
      'poisson_2d',
      { n_bits: 9, rhs: 'dipole', snapshot_every: 2, max_iters: 2000 },
      {
        onSnapshot(step, t, fields) {
          steps.push(step);
          expect(t).to.equal(0);
          expect(fields.map((x) => x.name)).to.deep.equal(['u']);
          expect(fields[0]!.data.length).to.equal(512 * 512);
        },
      },
    ).result;
    const iterations = out.stats.iterations!;
    expect(steps).to.deep.equal(Array.from({ length: Math.floor(iterations / 2) }, (_, k) => 2 * (k + 1)));
  });

  it('cancel() stops a run: the result rejects with ERR_TTS_CANCELLED', async function () {
    let calls = 0;
    let running: () => void = () => {};
    const started = new Promise<void>((r) => {
      running = r;
    });
    const run = engine.simulate(
      'poisson_2d',
      { n_bits: 11, rhs: 'dipole', preconditioner: 'none', tol: 1e-12 },
      {
        onProgress() {
          calls += 1;
          if (calls === 3) running();
        },
      },
    );
    await started;
    const t0 = performance.now();
    run.cancel();
    const err = await rejection(run.result);
    expect(err.code).to.equal(ENGINE_CANCELLED);
    expect(performance.now() - t0).to.be.below(2000);
    const after = calls;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).to.equal(after); // nothing more once settled
    run.cancel(); // a no-op once ended
  });

  it('pause() holds a run at its next poll with its state, resume() goes on to the same result, cancel() ends a paused run', async function () {
    this.timeout(60000);
    const params = { n_bits: 10, rhs: 'dipole', preconditioner: 'none', tol: 1e-14, max_iters: 300 };
    const whole = await engine.simulate('poisson_2d', params).result;
    let done = 0;
    let pausedAt = -1;
    let onPaused: () => void = () => {};
    const paused = new Promise<void>((r) => {
      onPaused = r;
    });
    const run = engine.simulate('poisson_2d', params, {
      onProgress(d) {
        done = d;
        if (d >= 20 && pausedAt < 0) {
          pausedAt = 0;
          run.pause();
        }
      },
      onPaused() {
        pausedAt = done;
        onPaused();
      },
    });
    await paused;
    await new Promise((r) => setTimeout(r, 300));
    expect(done, 'no step while paused').to.equal(pausedAt);
    expect(pausedAt).to.be.within(20, 299);
    run.resume();
    const out = await run.result;
    expect(out.stats.iterations).to.equal(whole.stats.iterations);
    expect(out.stats.residual).to.equal(whole.stats.residual);
    expect(Buffer.compare(Buffer.from(out.fields[0]!.data.buffer), Buffer.from(whole.fields[0]!.data.buffer))).to.equal(0);

    let onPaused2: () => void = () => {};
    const paused2 = new Promise<void>((r) => {
      onPaused2 = r;
    });
    const held = engine.simulate('poisson_2d', params, {
      onProgress(d) {
        if (d >= 5) held.pause();
      },
      onPaused: () => onPaused2(),
    });
    await paused2;
    const t0 = performance.now();
    held.cancel();
    expect((await rejection(held.result)).code).to.equal(ENGINE_CANCELLED);
    expect(performance.now() - t0).to.be.below(1000);
  });

  it('the process exits by itself once a run has finished, and soon after a run in flight is cancelled', async function () {
    const done = await runNode(
      `
      const out = await engine.simulate('poisson_2d', { n_bits: 9, tol: 1e-6 }).result;
      console.log('done', out.stats.iterations);`,
      20000,
    );
    expect(done.code).to.equal(0);
    expect(done.out).to.match(/^done \d+/);
    // A long unpreconditioned run, cancelled at its first progress report; nothing else holds the loop.
    const cancelled = await runNode(
      `
      const run = engine.simulate('poisson_2d', { n_bits: 12, rhs: 'dipole', preconditioner: 'none', tol: 1e-12 },
        { onProgress() { run.cancel(); } });
      run.result.catch((e) => console.log('rejected', e.code));`,
      20000,
    );
    expect(cancelled.code).to.equal(0);
    expect(cancelled.out.trim()).to.equal('rejected ERR_TTS_CANCELLED');
    // process.exit() with a run in flight exits cleanly too (the run is stopped first).
    const exited = await runNode(
      `
      const run = engine.simulate('poisson_2d', { n_bits: 12, rhs: 'dipole', preconditioner: 'none', tol: 1e-12 },
        { onProgress() { console.log('running'); process.exit(0); } });`,
      20000,
    );
    expect(exited.code).to.equal(0);
    expect(exited.out.trim()).to.equal('running');
  });

  it('a hook that throws stops the run and the result rejects with what it threw', async function () {
    const boom = new Error('store failed');
    const run = engine.simulate(
      'poisson_2d',
      { n_bits: 10, rhs: 'dipole', preconditioner: 'none', tol: 1e-12 },
      {
        onProgress() {
          throw boom;
        },
      },
    );
    expect(await rejection(run.result)).to.equal(boom);
  });

  it('bad params reject with ERR_TTS_INVALID naming the param, before anything runs', async function () {
    const cases: [string, Record<string, number | string | boolean>, string][] = [
      ['poisson_2d', {}, 'n_bits'],
      ['poisson_2d', { n_bits: 8 }, 'n_bits'],
      ['poisson_2d', { n_bits: 15 }, 'n_bits'],
      ['poisson_2d', { n_bits: 9.5 }, 'n_bits'],
      ['poisson_2d', { n_bits: 9, rhs: 'sine' }, 'rhs'],
      ['poisson_2d', { n_bits: 9, tol: -1 }, 'tol'],
      ['poisson_2d', { n_bits: 9, max_iters: 0 }, 'max_iters'],
      ['poisson_2d', { n_bits: 9, preconditioner: 'ilu' }, 'preconditioner'],
      ['poisson_2d', { n_bits: 9, bogus: 1 }, 'bogus'],
      ['nope_2d', { n_bits: 9 }, 'nope_2d'],
    ];
    for (const [solver, params, name] of cases) {
      const err = await rejection(engine.simulate(solver, params).result);
      expect(err.code, JSON.stringify(params)).to.equal(ENGINE_INVALID);
      expect(err.message).to.include(name);
    }
    const err = await rejection(engine.simulate('poisson_2d', { n_bits: 9, rhs: null as unknown as string }).result);
    expect(err.code).to.equal(ENGINE_INVALID);
    expect(err.message).to.include('rhs');
  });
});
