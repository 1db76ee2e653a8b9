// The scheduler's fairness and limits (CONTRACT.md section 8, "Simulation jobs"), without HTTP and
// with a solver the test drives by hand: tenants take turns (time slicing with a short quantum), a
// paused job resumes with its progress, cancel in every state, the per-tenant queued cap, the
// run-time budget, run time charged as it runs, and a ProblemError from storage becoming the job's
// error.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProblemError } from '../../src/http/errors.js';
import type { EntryService } from '../../src/entries/service.js';
import type { JobCharger, SubmitInput } from '../../src/jobs/scheduler.js';
import type { JobView } from '../../src/jobs/job.js';
import { smoothField, type FakeRun } from './fake-runner.js';
import { countBlobs, openScheduler, recordingCharger, until, type RigOptions, type SchedulerRig } from './scheduler-rig.js';

const A = 't-a';
const B = 't-b';
const QUANTUM_S = 0.2;

describe('simulation: turns across tenants, cancel, budgets and charges (no HTTP)', () => {
  let dir: string;
  let rig: SchedulerRig;

  const open = async (opts: RigOptions = {}) => {
    rig = await openScheduler(dir, { quantumS: QUANTUM_S, ...opts });
  };
  const job = (tenantId: string, over: Partial<SubmitInput> = {}): SubmitInput => ({
    tenantId,
    solver: 'poisson_2d',
    namespace: 'default',
    outputKeyPrefix: `run-${tenantId}`,
    params: { n_bits: 9 },
    ...over,
  });
  const submit = async (tenantId: string, over: Partial<SubmitInput> = {}) => (await rig.scheduler.submit(job(tenantId, over))).job_id;
  const status = (tenantId: string, id: string) => rig.scheduler.status(tenantId, id) as Promise<JobView>;
  const settled = (tenantId: string, id: string) =>
    until(`job ${id} to end`, async () => {
      const s = await status(tenantId, id);
      return s.status === 'completed' || s.status === 'failed' ? s : undefined;
    });
  /** The run of the n-th simulate() call, once it exists. */
  const run = async (n: number): Promise<FakeRun> => {
    await rig.runner.started(n + 1);
    return rig.runner.runs[n]!;
  };
  const finish = (r: FakeRun) => r.finish({ fields: [smoothField('u', 64)], stats: {} });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-turns-'));
  });
  afterEach(async () => {
    await rig?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it("a long job yields to another tenant's job after its quantum and resumes afterwards with its progress", async () => {
    await open();
    const long = await submit(A);
    const a = await run(0);
    a.progress(40, 1000);
    const t0 = Date.now();
    const short = await submit(B);
    const b = await run(1);
    const waited = (Date.now() - t0) / 1000;
    expect(waited, 'B started within about one quantum').to.be.below(QUANTUM_S + 0.5);
    expect(a.pauses).to.equal(1);
    expect(rig.scheduler.runningCount).to.equal(1);
    const paused = await status(A, long);
    expect(paused.status).to.equal('queued');
    expect(paused.progress.steps_completed).to.equal(40);
    expect(paused.started_at).to.be.a('number');
    finish(b);
    expect((await settled(B, short)).status).to.equal('completed');
    await until('A to resume', () => a.resumes === 1);
    expect((await status(A, long)).status).to.equal('running');
    a.progress(1000, 1000);
    finish(a);
    const done = await settled(A, long);
    expect(done.status).to.equal('completed');
    expect(done.progress.steps_completed).to.equal(1000);
    expect(rig.runner.runs).to.have.length(2); // resumed, never restarted
  });

  it('two long jobs of two tenants take turns, one quantum each', async () => {
    await open();
    const ja = await submit(A);
    const a = await run(0);
    const jb = await submit(B);
    const b = await run(1);
    await until('A to resume', () => a.resumes === 1);
    await until('B to yield', () => b.pauses === 1);
    await until('B to resume', () => b.resumes === 1);
    expect(a.pauses).to.be.at.least(2);
    expect(rig.runner.maxRunning).to.equal(2); // both alive (one paused), one running at a time
    expect(rig.scheduler.runningCount).to.equal(1);
    // A paused solver cannot end: each ends while it has the turn.
    for (const r of [a, b]) {
      r.polls = false;
      await until('its turn', () => !r.paused);
      finish(r);
    }
    expect((await settled(A, ja)).status).to.equal('completed');
    expect((await settled(B, jb)).status).to.equal('completed');
  });

  it('a tenant with nothing running goes before the second job of a tenant with one running', async () => {
    await open({ concurrency: 2, quantumS: 60 });
    await submit(A);
    await submit(A);
    const a3 = await submit(A);
    await run(1);
    const b1 = await submit(B);
    finish(await run(0));
    const next = await run(2);
    expect(next.params).to.include({ n_bits: 9 });
    expect((await status(B, b1)).status).to.equal('running');
    expect((await status(A, a3)).status).to.equal('queued');
  });

  it('with two slots, a tenant holding both yields one to a waiting tenant after its quantum', async () => {
    await open({ concurrency: 2 });
    await submit(A);
    await submit(A);
    const [a1, a2] = [await run(0), await run(1)];
    await new Promise((r) => setTimeout(r, QUANTUM_S * 1000 + 50)); // both quanta used
    const b = await submit(B);
    await run(2);
    expect((await status(B, b)).status).to.equal('running');
    expect(a1.pauses + a2.pauses).to.equal(1);
    expect(rig.scheduler.runningCount).to.equal(2);
  });

  it('a job whose solver does not reach a poll keeps its slot until it does', async () => {
    await open();
    await submit(A);
    const a = await run(0);
    a.polls = false;
    await submit(B);
    await new Promise((r) => setTimeout(r, QUANTUM_S * 1000 + 150));
    expect(rig.runner.runs).to.have.length(1);
    expect(rig.scheduler.runningCount).to.equal(1);
    a.poll();
    await run(1);
  });

  it('cancel: a queued job fails at once, a running and a paused one when the solver stops, all with code cancelled', async () => {
    await open();
    const running = await submit(A);
    const a = await run(0);
    const queued = await submit(A);
    const q = await rig.scheduler.cancel(A, queued);
    expect(q!.status).to.equal('failed');
    expect(q!.error).to.include({ code: 'cancelled' });
    a.snapshot(5, 0.5, [smoothField('u', 64, 1)]);
    await until('the snapshot blob', async () => (await countBlobs(path.join(dir, 'blobs'))) === 1);
    const r = await rig.scheduler.cancel(A, running);
    expect(a.cancelled).to.equal(true);
    expect(r!.status).to.equal('failed');
    expect(r!.error).to.include({ code: 'cancelled', status: 409 });
    expect(r!.outputs, 'the snapshot it stored is kept').to.deep.equal(['run-t-a/u/step_5']);
    expect((await rig.entries.list(A, 'default', '', 100, 0)).total).to.equal(1);

    const long = await submit(A);
    const l = await run(1);
    await submit(B);
    await until('A to yield', () => l.paused);
    const p = await rig.scheduler.cancel(A, long);
    expect(l.cancelled).to.equal(true);
    expect(p!.status).to.equal('failed');
    expect(p!.error).to.include({ code: 'cancelled' });
  });

  it("cancel of a finished job is 409 job_finished; another tenant's job is not found", async () => {
    await open();
    const id = await submit(A);
    finish(await run(0));
    await settled(A, id);
    const err = await rig.scheduler.cancel(A, id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ProblemError);
    expect(err).to.include({ status: 409, code: 'job_finished' });
    const other = await submit(A);
    expect(await rig.scheduler.cancel(B, other)).to.equal(undefined);
    expect((await status(A, other)).status).to.not.equal('failed');
  });

  it("cancelTenant (deactivation) cancels the tenant's queued, running and paused jobs only", async () => {
    await open();
    const a1 = await submit(A);
    const a = await run(0);
    const b1 = await submit(B);
    await until('A to yield', () => a.paused);
    const a2 = await submit(A);
    await rig.scheduler.cancelTenant(B);
    expect((await status(B, b1)).error).to.include({ code: 'cancelled' });
    await until('A to resume', () => a.resumes === 1);
    await rig.scheduler.cancelTenant(A);
    for (const id of [a1, a2]) expect((await status(A, id)).error).to.include({ code: 'cancelled' });
  });

  it('holds at most queuedPerTenant queued jobs per tenant (running not counted): 429 too_many_jobs', async () => {
    await open({ queuedPerTenant: 2 });
    await submit(A);
    await run(0);
    await submit(A);
    await submit(A);
    const err = await rig.scheduler.submit(job(A)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.include({ status: 429, code: 'too_many_jobs' });
    await submit(B); // another tenant is not affected
    const rows = await rig.scheduler.list(A, { limit: 50 });
    expect(rows).to.have.length(3);
  });

  it('a job past params.max_seconds of run time fails with time_limit, keeping its snapshots; paused time does not count', async () => {
    await open();
    const id = await submit(A, { params: { n_bits: 9, max_seconds: 0.6 } });
    const a = await run(0);
    a.snapshot(1, 0.1, [smoothField('u', 64)]);
    const b = await submit(B);
    await until('A to yield', () => a.paused);
    const other = await run(1);
    other.polls = false; // B keeps its turn: A stays paused
    await new Promise((r) => setTimeout(r, 700)); // paused longer than the budget
    expect((await status(A, id)).status).to.equal('queued');
    finish(other);
    await settled(B, b);
    const done = await settled(A, id);
    expect(done.error).to.include({ code: 'time_limit' });
    expect(done.progress.elapsed_s).to.be.within(0.6, 1.2);
    expect(done.outputs).to.deep.equal(['run-t-a/u/step_1']);
  });

  it('charges a period of run time before the solver starts, one per started period as it runs, and the bill is settled by its end', async () => {
    const charger = recordingCharger(0.25);
    const { charges } = charger;
    await open({ charger, quantumS: 60 });
    const id = await submit(A);
    const a = await run(0);
    expect(charges).to.deep.equal([A]);
    await until('the third period', () => charges.length >= 3); // periods started at 0, 0.25, 0.5
    finish(a);
    const done = await settled(A, id);
    expect(done.progress.elapsed_s).to.be.at.least(0.5);
    expect(charges).to.have.length(Math.floor(done.progress.elapsed_s / 0.25) + 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(charges).to.have.length(Math.floor(done.progress.elapsed_s / 0.25) + 1); // nothing after the end
  });

  it('a job refused before its solver starts (deactivated tenant, missing solver) is charged no run time', async () => {
    const charger = recordingCharger(0.1);
    const { charges } = charger;
    await open({ charger, tenantActive: (t) => t !== B });
    const gone = await submit(B);
    expect((await settled(B, gone)).error).to.include({ code: 'cancelled' });
    const missing = await submit(A, { solver: 'helmholtz_3d' });
    expect((await settled(A, missing)).error).to.include({ code: 'solver_unavailable' });
    await new Promise((r) => setTimeout(r, 300));
    expect(charges).to.deep.equal([]);
    expect(rig.runner.runs).to.have.length(0);
  });

  it('a run a shutdown releases is charged no run time after the stop began, and its job keeps the periods it paid', async () => {
    const charger = recordingCharger(0.05);
    let stored!: () => void;
    const storing = new Promise<void>((resolve) => (stored = resolve));
    let reached = false;
    const held = async <T>(store: () => Promise<T>) => {
      reached = true;
      await storing;
      return store();
    };
    await open({
      charger,
      quantumS: 60,
      outputsOf: (entries: EntryService) => ({
        prepare: (input) => held(() => entries.prepare(input)),
        prepareCores: (tenantId, input) => held(() => entries.prepareCores(tenantId, input)),
        discard: (items) => entries.discard(items),
        commitPrepared: (tenantId, namespace, items, also) => entries.commitPrepared(tenantId, namespace, items, also),
      }),
    });
    const id = await submit(A);
    finish(await run(0));
    await until('its outputs being stored', () => reached); // its run time still counts
    const stopping = rig.scheduler.stop();
    const paid = charger.charges.length;
    await new Promise((r) => setTimeout(r, 300)); // six periods
    stored();
    await stopping;
    expect(charger.charges).to.have.length(paid);
    expect(await rig.store.get(A, id)).to.include({ status: 'queued', charged_periods: paid });
  });

  it('a job fails with quota_exceeded when a charge finds no room, keeping its snapshots; no charge, no run', async () => {
    let room = 2;
    const charger: JobCharger = {
      periodS: 0.2,
      async charge() {
        if (room-- <= 0) throw new ProblemError(402, 'quota_exceeded', 'no CU left this month');
      },
    };
    await open({ charger, quantumS: 60 });
    const id = await submit(A);
    const a = await run(0);
    a.snapshot(1, 0.1, [smoothField('u', 64)]);
    const done = await settled(A, id);
    expect(a.cancelled).to.equal(true);
    expect(done.error).to.include({ code: 'quota_exceeded', status: 402 });
    expect(done.outputs).to.deep.equal(['run-t-a/u/step_1']);
    const never = await submit(A);
    expect((await settled(A, never)).error).to.include({ code: 'quota_exceeded' });
    expect(rig.runner.runs).to.have.length(1);
  });

  it("a ProblemError from storing the outputs (storage quota) is the job's error, and nothing is stored", async () => {
    await open({
      outputsOf: (entries: EntryService) => ({
        prepare: (input) => entries.prepare(input),
        prepareCores: (tenantId, input) => entries.prepareCores(tenantId, input),
        discard: (items) => entries.discard(items),
        async commitPrepared(tenantId, namespace, items) {
          await entries.discard(items);
          throw new ProblemError(402, 'storage_quota_exceeded', `tenant ${tenantId} would pass its storage quota in ${namespace}`);
        },
      }),
    });
    const id = await submit(A);
    finish(await run(0));
    const done = await settled(A, id);
    expect(done.error).to.include({ code: 'storage_quota_exceeded', status: 402 });
    expect(await countBlobs(path.join(dir, 'blobs'))).to.equal(0);
  });

  it('a paused job left by a stop is queued again from the start at the next start', async () => {
    await open();
    const long = await submit(A);
    const a = await run(0);
    a.progress(10, 100);
    await submit(B);
    await until('A to yield', () => a.paused);
    await rig.close();
    expect(a.cancelled).to.equal(true);
    const row = await (async () => {
      await open();
      return rig.store.get(A, long);
    })();
    expect(row).to.include({ steps_completed: 0 });
    expect(row!.status === 'queued' || row!.status === 'running').to.equal(true);
  });
});
