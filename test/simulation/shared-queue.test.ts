// The store as the job queue several nodes share (no HTTP, SQLite, hand-driven solvers): a node
// without the worker role never runs a job; a cancel asked on one node stops the run another node
// holds; a run whose job was taken over (its lease ran out) commits nothing; a dead node's job is
// run again by another node, once.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { JobScheduler, type SubmitInput } from '../../src/jobs/scheduler.js';
import type { LeaseTimings } from '../../src/jobs/lease.js';
import { FakeRunner, smoothField } from './fake-runner.js';
import { countBlobs, openScheduler, recordingCharger, silent, until, type SchedulerRig } from './scheduler-rig.js';

const TENANT = 't-shared';
/** Short leases so that a test sees one run out. */
const FAST: LeaseTimings = { leaseS: 0.6, heartbeatS: 0.2, pollMs: 50 };

describe('simulation: one job queue shared by several nodes (no HTTP)', () => {
  let dir: string;
  let rig: SchedulerRig | undefined;
  let others: JobScheduler[] = [];

  const job = (over: Partial<SubmitInput> = {}): SubmitInput => ({
    tenantId: TENANT,
    solver: 'poisson_2d',
    namespace: 'default',
    outputKeyPrefix: 'run',
    params: { n_bits: 9, seed: 0 },
    ...over,
  });
  /** A second node: another scheduler (its own runner) over the same store and entries. */
  const secondNode = async (runner: FakeRunner) => {
    const node = new JobScheduler({ store: rig!.store, outputs: rig!.entries, runner, concurrency: 1, log: silent, timings: FAST });
    others.push(node);
    await node.start();
    return node;
  };
  const row = (id: string) => rig!.store.get(TENANT, id);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-shared-'));
  });
  afterEach(async () => {
    for (const node of others) await node.stop();
    others = [];
    await rig?.close();
    rig = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('a node without the worker role queues jobs and never runs one; a worker node runs them, and a cancel on the first stops it', async () => {
    rig = await openScheduler(dir, { worker: false, timings: FAST });
    const { job_id: id } = await rig.scheduler.submit(job());
    await new Promise((r) => setTimeout(r, 4 * FAST.pollMs));
    expect(rig.runner.runs).to.have.length(0);
    expect(await row(id)).to.include({ status: 'queued', attempts: 0, lease_owner: null });

    const runner = new FakeRunner();
    const worker = await secondNode(runner);
    await runner.started(1);
    expect(await row(id)).to.include({ status: 'running', attempts: 1, lease_owner: worker.owner });
    runner.runs[0]!.progress(3, 10);
    await until('progress readable on the other node', async () => (await row(id))?.steps_completed === 3);

    const cancelled = await rig.scheduler.cancel(TENANT, id);
    expect(runner.runs[0]!.cancelled).to.equal(true);
    expect(cancelled).to.deep.include({ status: 'failed' });
    expect(cancelled!.error).to.include({ code: 'cancelled' });
    expect(rig.runner.runs).to.have.length(0);
  });

  it('a run whose job another node took over (its lease ran out) cannot commit: no outputs, the row stays the new holder’s', async () => {
    rig = await openScheduler(dir); // heartbeat every 5 s: the run ends before it would notice
    const { job_id: id } = await rig.scheduler.submit(job());
    await rig.runner.started(1);
    const later = Date.now() / 1000 + 3600; // as if this node had stalled past its lease
    expect(await rig.store.claim({ owner: 'node-b', now: later, leaseS: 60 }, id)).to.include({ attempts: 2 });
    rig.runner.runs[0]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    await until('the fenced run to end', () => rig!.scheduler.runningCount === 0);
    expect(await row(id)).to.include({ status: 'running', lease_owner: 'node-b', attempts: 2, outputs: null });
    expect(await countBlobs(path.join(dir, 'blobs'))).to.equal(0);
  });

  it("a dead node's job is run again from the start by another node once its lease runs out, and completes once", async () => {
    rig = await openScheduler(dir, { worker: false, timings: FAST });
    const { job_id: id } = await rig.scheduler.submit(job());
    // a node claims it and dies: nothing renews its lease
    expect(await rig.store.claim({ owner: 'dead-node', now: Date.now() / 1000, leaseS: FAST.leaseS }, id)).to.include({ attempts: 1 });
    const runner = new FakeRunner();
    const t0 = Date.now();
    await secondNode(runner);
    await runner.started(1);
    expect(Date.now() - t0).to.be.greaterThan(FAST.leaseS * 1000 - 200); // not before the lease ran out
    expect(await row(id)).to.include({ status: 'running', attempts: 2, steps_completed: 0 });
    runner.runs[0]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    await until('the job to complete', async () => (await row(id))?.status === 'completed');
    expect(JSON.parse((await row(id))!.outputs!)).to.deep.equal(['run/u']);
    expect(runner.runs).to.have.length(1);
  });

  it('a job released by a graceful stop is taken by another node at once and run again from the start, completed once, its paid run time not charged again', async () => {
    const charger = recordingCharger(0.25);
    const { charges } = charger;
    const timings = { ...FAST, leaseS: 30 }; // no lease runs out here: the release alone hands the job over
    const options = { charger, quantumS: 60, timings };
    rig = await openScheduler(dir, options);
    const { job_id: id } = await rig.scheduler.submit(job());
    await rig.runner.started(1);
    rig.runner.runs[0]!.progress(3, 10);
    await until('three periods paid', () => charges.length >= 3);
    const runner = new FakeRunner();
    const other = new JobScheduler({ store: rig.store, outputs: rig.entries, runner, concurrency: 1, log: silent, ...options });
    others.push(other);
    await other.start();
    await rig.scheduler.stop(); // what SIGTERM does
    const paid = charges.length;
    expect(rig.runner.runs[0]!.cancelled).to.equal(true);
    await runner.started(1, 2000);
    const started = Date.now();
    expect(await row(id)).to.include({
      status: 'running',
      attempts: 2,
      steps_completed: 0,
      lease_owner: other.owner,
      charged_periods: paid,
    });
    // the new run's first periods were paid by the first run
    await until('the new run to pass the run time paid', () => charges.length > paid);
    expect(Date.now() - started).to.be.at.least(paid * 250 - 50);
    runner.runs[0]!.finish({ fields: [smoothField('u', 64)], stats: {} });
    await until('the job to complete', async () => (await row(id))?.status === 'completed');
    const done = (await row(id))!;
    expect(JSON.parse(done.outputs!)).to.deep.equal(['run/u']);
    expect(charges).to.have.length(Math.floor(done.elapsed_s / 0.25) + 1); // the bill of one run as long as the longer one
    expect(rig.runner.runs).to.have.length(1);
    expect(runner.runs).to.have.length(1);
  });

  it('a free node takes the job of a tenant with nothing running before a second job of a tenant running one on another node', async () => {
    rig = await openScheduler(dir, { worker: false, timings: FAST });
    const x = new FakeRunner();
    await secondNode(x);
    await rig.scheduler.submit(job({ tenantId: 'ta' }));
    await x.started(1);
    const a2 = await rig.scheduler.submit(job({ tenantId: 'ta' }));
    const b1 = await rig.scheduler.submit(job({ tenantId: 'tb' }));
    const y = new FakeRunner();
    const nodeY = await secondNode(y);
    await y.started(1);
    expect(await rig.store.get('tb', b1.job_id)).to.include({ status: 'running', lease_owner: nodeY.owner });
    expect(await rig.store.get('ta', a2.job_id)).to.include({ status: 'queued' });
  });

  it('two nodes give tenants tied on jobs running turns in rotation, whoever submitted first: none waits behind the others', async () => {
    rig = await openScheduler(dir, { worker: false, timings: FAST });
    // A's jobs are all older than B's, B's than C's: the oldest job alone would never give C a turn.
    const tenants = ['ta', 'tb', 'tc'];
    for (const [seed, tenantId] of tenants.entries())
      for (const _ of [1, 2, 3]) await rig.scheduler.submit(job({ tenantId, params: { n_bits: 9, seed } }));
    const x = new FakeRunner();
    const y = new FakeRunner();
    await secondNode(x);
    await x.started(1);
    await secondNode(y);
    await y.started(1);
    // Each node runs one job at a time; the oldest run ends, and its node takes the next turn.
    const started = [x.runs[0]!, y.runs[0]!];
    for (let i = 0; i < 4; i++) {
      const ending = started[i]!;
      const runner = x.runs.includes(ending) ? x : y;
      const n = runner.runs.length;
      ending.finish({ fields: [smoothField('u', 64)], stats: {} });
      await runner.started(n + 1);
      started.push(runner.runs[n]!);
    }
    expect(started.map((r) => tenants[r.params.seed as number])).to.deep.equal(['ta', 'tb', 'tc', 'ta', 'tb', 'tc']);
  });

  it('a heartbeat that finds its job taken over stops the run', async () => {
    rig = await openScheduler(dir, { timings: FAST });
    const { job_id: id } = await rig.scheduler.submit(job());
    await rig.runner.started(1);
    await rig.store.claim({ owner: 'node-b', now: Date.now() / 1000 + 3600, leaseS: 60 }, id);
    await until('the run to be cancelled', () => rig!.runner.runs[0]!.cancelled);
    await until('the run to end', () => rig!.scheduler.runningCount === 0);
    expect(await row(id)).to.include({ status: 'running', lease_owner: 'node-b' });
  });
});
