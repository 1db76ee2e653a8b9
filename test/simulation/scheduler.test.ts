// The job scheduler without HTTP, on a temporary database with the real entry service, and a solver
// runner the test drives by hand: FIFO under the concurrency cap (one tenant), transitions, outputs
// committed all at once, failures leaving nothing behind, shutdown and crash recovery. Turns across
// tenants, cancel, budgets and charges: turns.test.ts.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EntryService } from '../../src/entries/service.js';
import { JOB_MIGRATIONS } from '../../src/store/sqlite/migrations/jobs.js';
import { ENTRY_MIGRATIONS } from '../../src/store/sqlite/migrations/entries.js';
import { Database } from '../../src/store/sqlite/db.js';
import { SqliteJobStore as JobStore } from '../../src/store/sqlite/jobs.js';
import type { JobScheduler, SubmitInput } from '../../src/jobs/scheduler.js';
import type { JobView } from '../../src/jobs/job.js';
import { smoothField, type FakeRunner } from './fake-runner.js';
import { countBlobs, openScheduler, until, type SchedulerRig } from './scheduler-rig.js';

const TENANT = 't-sched';

describe('simulation: job scheduler (no HTTP, hand-driven solver)', () => {
  let dir: string;
  let entries: EntryService;
  let store: JobStore;
  let runner: FakeRunner;
  let scheduler: JobScheduler;
  let active: Set<string>;
  let rig: SchedulerRig | undefined;

  const open = async (concurrency = 1) => {
    rig = await openScheduler(dir, { concurrency, tenantActive: (t) => active.has(t) });
    ({ entries, store, runner, scheduler } = rig);
  };
  const close = async () => {
    await rig?.close();
    rig = undefined;
  };
  const job = (over: Partial<SubmitInput> = {}): SubmitInput => ({
    tenantId: TENANT,
    solver: 'poisson_2d',
    namespace: 'default',
    outputKeyPrefix: 'run',
    params: { n_bits: 9, tol: 1e-8, seed: 0 },
    ...over,
  });
  const status = (id: string) => scheduler.status(TENANT, id) as Promise<JobView>;
  const settled = (id: string) =>
    until(`job ${id} to settle`, async () => {
      const s = await status(id);
      return s.status === 'completed' || s.status === 'failed' ? s : undefined;
    });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-jobs-'));
    active = new Set([TENANT]);
  });
  afterEach(async () => {
    await close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('runs at most `concurrency` jobs at once, in submission order', async () => {
    await open(2);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await scheduler.submit(job({ outputKeyPrefix: `run${i}` }))).job_id);
    await runner.started(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(runner.runs).to.have.length(2);
    expect((await status(ids[2]!)).status).to.equal('queued');
    for (let i = 0; i < 5; i++) {
      await runner.started(i + 1);
      runner.runs[i]!.finish({ fields: [smoothField('u', 64, i)], stats: {} });
      await settled(ids[i]!);
    }
    expect(runner.maxRunning).to.equal(2);
    const starts = await Promise.all(ids.map(async (id) => (await status(id)).started_at!));
    expect([...starts].sort((a, b) => a - b)).to.deep.equal(starts); // FIFO
    expect(runner.runs.map((r) => r.params.n_bits)).to.deep.equal([9, 9, 9, 9, 9]);
  });

  it('shows progress while running and commits every output with its metadata when completed', async () => {
    await open();
    const row = await scheduler.submit(job({ params: { n_bits: 9, snapshot_every: 5, seed: 0 } }));
    expect(row.status).to.equal('queued');
    await runner.started(1);
    const run = runner.runs[0]!;
    expect(run.params).to.deep.equal({ n_bits: 9, snapshot_every: 5, seed: 0 });
    run.progress(3, 10);
    const mid = await status(row.job_id);
    expect(mid.status).to.equal('running');
    expect(mid.progress.steps_completed).to.equal(3);
    expect(mid.progress.steps_total).to.equal(10);
    expect(mid.progress.elapsed_s).to.be.at.least(0);
    run.snapshot(5, 0.5, [smoothField('u', 64, 0.1), smoothField('f', 64, 0.2)]);
    run.progress(10, 10);
    // nothing is visible before the job completes
    expect((await entries.list(TENANT, 'default', 'run/', 100, 0)).total).to.equal(0);
    run.finish({ fields: [smoothField('u', 64, 0.3), smoothField('f', 64, 0.4)], stats: { steps: 10, t: 1, residual: 1e-9 } });
    const done = await settled(row.job_id);
    expect(done.status).to.equal('completed');
    expect(done.progress).to.include({ steps_completed: 10, steps_total: 10 });
    expect(done.outputs).to.have.members(['run/u', 'run/f', 'run/u/step_5', 'run/f/step_5']);
    expect(done.stats).to.deep.equal({ steps: 10, t: 1, residual: 1e-9 });
    expect(done.finished_at).to.be.at.least(done.started_at!);
    const u = await entries.require(TENANT, 'default', 'run/u');
    expect(JSON.parse(u.metadata)).to.deep.equal({
      solver: 'poisson_2d',
      job_id: row.job_id,
      field: 'u',
      step: 10,
      t: 1,
      n_bits: 9,
      params: { n_bits: 9, snapshot_every: 5, seed: 0 },
    });
    expect(u.domain).to.equal('simulation');
    expect(JSON.parse(u.shape)).to.deep.equal([64, 64]);
    const snap = await entries.require(TENANT, 'default', 'run/f/step_5');
    expect(JSON.parse(snap.metadata)).to.include({ field: 'f', step: 5, t: 0.5 });
    // the stored field is the solver's field within the simulation tolerance
    const dense = new Float64Array((await entries.readDense(u)).slice().buffer);
    const ref = smoothField('u', 64, 0.3).data;
    let err = 0;
    let norm = 0;
    for (let i = 0; i < ref.length; i++) {
      err += (dense[i]! - ref[i]!) ** 2;
      norm += ref[i]! ** 2;
    }
    expect(Math.sqrt(err / norm)).to.be.below(1e-5);
  });

  it('a failed job keeps the problem in `error` and leaves no outputs and no blobs', async () => {
    await open();
    const row = await scheduler.submit(job({ params: { n_bits: 9, snapshot_every: 1 } }));
    await runner.started(1);
    const run = runner.runs[0]!;
    run.snapshot(1, 0.1, [smoothField('u', 64, 1)]);
    run.snapshot(2, 0.2, [smoothField('u', 64, 2)]);
    run.progress(2, 50);
    await new Promise((r) => setTimeout(r, 100)); // let the snapshots reach their blobs
    run.fail('ERR_TTS_INTERNAL', 'conjugate gradient diverged');
    const done = await settled(row.job_id);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ status: 500, code: 'internal_error', type: '/problems/internal_error' });
    expect(done.error!.detail).to.contain('conjugate gradient diverged');
    expect(done).to.not.have.property('outputs');
    expect(done.progress.steps_completed).to.equal(2);
    expect((await entries.list(TENANT, 'default', '', 100, 0)).total).to.equal(0);
    expect(await countBlobs(path.join(dir, 'blobs'))).to.equal(0);
  });

  it('an engine rejection of the params is a 400 problem; other errors are described without internals', async () => {
    await open();
    const bad = await scheduler.submit(job());
    await runner.started(1);
    runner.runs[0]!.fail('ERR_TTS_INVALID', 'params.max_iters must be positive');
    const a = await settled(bad.job_id);
    expect(a.error).to.include({ status: 400, code: 'invalid_request', detail: 'params.max_iters must be positive' });

    const odd = await scheduler.submit(job());
    await runner.started(2);
    runner.runs[1]!.fail(undefined, 'ENOENT: /secret/internal/path');
    const b = await settled(odd.job_id);
    expect(b.error).to.include({ status: 500, code: 'internal_error' });
    expect(b.error!.detail).to.not.contain('/secret');
    expect(b.error!.detail).to.contain(odd.job_id);
  });

  it('a snapshot that cannot be stored cancels the solver and fails the job with nothing stored', async () => {
    await open();
    const row = await scheduler.submit(job({ params: { n_bits: 9, snapshot_every: 1 } }));
    await runner.started(1);
    const run = runner.runs[0]!;
    run.snapshot(1, 0.1, [smoothField('u', 64, 1)]);
    run.snapshot(2, 0.2, [{ name: 'u', shape: [64, 64], data: new Float64Array(10) }]); // malformed
    const done = await settled(row.job_id);
    expect(run.cancelled).to.equal(true);
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ code: 'internal_error' });
    expect((await entries.list(TENANT, 'default', '', 100, 0)).total).to.equal(0);
    expect(await countBlobs(path.join(dir, 'blobs'))).to.equal(0);
  });

  it('stop() cancels running jobs and leaves them queued; the next start runs them to completion', async () => {
    await open(1);
    const first = await scheduler.submit(job({ outputKeyPrefix: 'a', params: { n_bits: 9, snapshot_every: 1 } }));
    const second = await scheduler.submit(job({ outputKeyPrefix: 'b' }));
    await runner.started(1);
    runner.runs[0]!.snapshot(1, 0.1, [smoothField('u', 64)]);
    runner.runs[0]!.progress(1, 100);
    await until('the snapshot blob', async () => (await countBlobs(path.join(dir, 'blobs'))) === 1);
    await scheduler.stop();
    expect(runner.runs[0]!.cancelled).to.equal(true);
    expect(runner.runs).to.have.length(1);
    const after = await store.get(TENANT, first.job_id);
    expect(after).to.include({ status: 'queued', started_at: null, steps_completed: 0, attempts: 1, lease_owner: null }); // released
    expect((await store.get(TENANT, second.job_id))!.status).to.equal('queued');
    expect(await countBlobs(path.join(dir, 'blobs'))).to.equal(0);
    await close();

    await open(1);
    await runner.started(1);
    expect(runner.runs[0]!.params).to.include({ n_bits: 9, snapshot_every: 1 }); // FIFO: the first job again
    runner.runs[0]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    await runner.started(2);
    runner.runs[1]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    expect((await settled(first.job_id)).outputs).to.deep.equal(['a/u']);
    expect((await settled(second.job_id)).outputs).to.deep.equal(['b/u']);
    expect((await store.get(TENANT, first.job_id))!.attempts).to.equal(2);
  });

  it('a job left running by a crash (its process gone) is queued again at start', async () => {
    const crashed = await Database.open(path.join(dir, 'ttstore.db'), [...ENTRY_MIGRATIONS, ...JOB_MIGRATIONS]);
    const s = new JobStore(crashed);
    await s.insert(
      {
        jobId: 'job_crashed',
        tenantId: TENANT,
        solver: 'euler_2d',
        namespace: 'default',
        outputKeyPrefix: 'c',
        params: { n_bits: 9, steps: 3 },
        stepsTotal: 3,
        createdAt: 1,
      },
      1,
    );
    // held under a lease that has not run out, by a process of this machine that has ended: a start releases it
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const lease = { owner: `${os.hostname()}:${gone}:0`, now: Date.now() / 1000, leaseS: 3600 };
    expect(await s.claim(lease)).to.include({ job_id: 'job_crashed' });
    await crashed.close(); // the process dies here: the row still says running
    await open();
    await runner.started(1);
    expect(runner.runs[0]!.solver).to.equal('euler_2d');
    runner.runs[0]!.finish({ fields: [smoothField('rho', 64)], stats: {} });
    const done = await settled('job_crashed');
    expect(done.status).to.equal('completed');
    expect(done.outputs).to.deep.equal(['c/rho']);
  });

  it('a solver this build lacks, or a deactivated tenant, fails the job before it runs', async () => {
    await open();
    const missing = await scheduler.submit(job({ solver: 'helmholtz_3d' }));
    const m = await settled(missing.job_id);
    expect(m.error).to.include({ status: 501, code: 'solver_unavailable' });
    active.delete(TENANT);
    const gone = await scheduler.submit(job());
    const g = await settled(gone.job_id);
    expect(g.error).to.include({ code: 'cancelled' });
    expect(runner.runs).to.have.length(0);
  });

  it('status and list show a tenant only its own jobs, newest first, filtered by namespace and status', async () => {
    await open();
    const a1 = await scheduler.submit(job({ namespace: 'default' }));
    const a2 = await scheduler.submit(job({ namespace: 'other' }));
    const b1 = await scheduler.submit(job({ tenantId: 't-other' }));
    expect(await scheduler.status(TENANT, b1.job_id)).to.equal(undefined);
    expect(await scheduler.status('t-other', a1.job_id)).to.equal(undefined);
    const all = await scheduler.list(TENANT, { limit: 50 });
    expect(all.map((j) => j.job_id)).to.deep.equal([a2.job_id, a1.job_id]);
    expect((await scheduler.list(TENANT, { limit: 1 })).map((j) => j.job_id)).to.deep.equal([a2.job_id]);
    expect((await scheduler.list(TENANT, { limit: 50, namespace: 'default' })).map((j) => j.job_id)).to.deep.equal([a1.job_id]);
    await runner.started(1);
    runner.runs[0]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    await settled(a1.job_id);
    expect((await scheduler.list(TENANT, { limit: 50, status: 'completed' })).map((j) => j.job_id)).to.deep.equal([a1.job_id]);
  });
});
