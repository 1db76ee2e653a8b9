// Simulation jobs over HTTP under CONTRACT.md section 8: tenants take turns (a 1 s quantum), cancel
// in each state (queued, running, paused, finished, another tenant's), deactivation cancels a
// tenant's jobs, the run-time budget ends a job with time_limit, and the queued cap answers 429.
import { expect } from 'chai';
import { logRecords, type TestServer } from '../helpers/server.js';
import { admin } from '../helpers/tenants.js';
import {
  finished,
  jobStatus,
  startSimServer,
  submit,
  tenantClient,
  waitCompleted,
  waitFor,
  type Client,
  type JobStatusBody,
} from './helpers.js';

const QUANTUM_S = 1;
/** A job that runs until it is stopped: 1e6 steps of euler_2d at 512² (its set-up takes milliseconds). */
const LONG = { solver: 'euler_2d', params: { n_bits: 9, steps: 1_000_000 } };
/** A job of a second or two. */
const SHORT = { solver: 'euler_2d', params: { n_bits: 9, steps: 12 } };

describe('simulation: turns, cancel, deactivation, budget and queued cap over HTTP', function () {
  this.timeout(60000);
  let server: TestServer;
  const started: Array<{ c: Client; id: string }> = [];

  const launch = async (c: Client, body: Record<string, unknown>): Promise<JobStatusBody> => {
    const job = await submit(c, body);
    started.push({ c, id: job.job_id });
    return job;
  };
  const cancel = (c: Client, id: string) => c.call('POST', `/v1/simulation/cancel/${encodeURIComponent(id)}`);
  const usage = async (c: Client): Promise<number> =>
    (await admin(server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.breakdown.simulation;

  before(async () => {
    server = await startSimServer({ env: { SVC_GATE_JOB_QUANTUM_S: String(QUANTUM_S), SVC_GATE_JOBS_QUEUED_PER_TENANT: '2' } });
  });
  afterEach(async () => {
    // Leave the scheduler empty for the next test.
    for (const { c, id } of started.splice(0)) await cancel(c, id).catch(() => undefined);
  });
  after(async () => {
    await server.destroy();
  });

  it("another tenant's job starts within about one quantum of a long job, which then waits paused with its progress", async () => {
    const a = await tenantClient(server);
    const b = await tenantClient(server);
    const long = await launch(a, LONG);
    await waitFor(a, long.job_id, (s) => s.status === 'running' && s.progress.steps_completed > 0, { what: 'the long job to run' });
    const t0 = Date.now() / 1000;
    const short = await launch(b, SHORT);
    const begun = await waitFor(b, short.job_id, (s) => s.started_at !== null, { what: 'the short job to start', timeoutMs: 15000 });
    const wait = begun.started_at! - t0;
    console.log(`      another tenant's job started ${wait.toFixed(2)} s after it was submitted (quantum ${QUANTUM_S} s)`);
    expect(wait).to.be.below(QUANTUM_S + 2.5);
    const paused = await jobStatus(a, long.job_id);
    expect(paused.status, 'the long job gave up its turn').to.equal('queued');
    expect(paused.progress.steps_completed).to.be.above(0);
    expect(paused.started_at).to.be.a('number');
    // Cancel while paused: it fails within 5 s, with code cancelled.
    const t1 = Date.now();
    const r = await cancel(a, long.job_id);
    expect(r.status).to.equal(200);
    const ended = await waitFor(a, long.job_id, finished, { timeoutMs: 5000, what: 'the paused job to end' });
    expect(Date.now() - t1).to.be.below(5000);
    expect(ended.status).to.equal('failed');
    expect(ended.error).to.include({ code: 'cancelled' });
    expect((await waitCompleted(b, short.job_id, 30000)).status).to.equal('completed');
  });

  it("cancel: queued fails at once, running within 5 s, finished is 409 job_finished, another tenant's 404; 0.1 CU per 200", async () => {
    const a = await tenantClient(server);
    const other = await tenantClient(server);
    const running = await launch(a, LONG);
    await waitFor(a, running.job_id, (s) => s.status === 'running', { what: 'the job to run' });
    const queued = await launch(a, SHORT);
    const cu0 = await usage(a);
    const q = await cancel(a, queued.job_id);
    expect(q.status).to.equal(200);
    expect(q.body).to.include({ job_id: queued.job_id, status: 'failed' });
    expect(q.body.error).to.include({ code: 'cancelled', type: '/problems/cancelled' });
    expect(q.body.started_at).to.equal(null);
    expect(await usage(a)).to.be.closeTo(cu0 + 0.1, 1e-9);

    expect((await cancel(other, running.job_id)).status).to.equal(404);
    expect((await cancel(a, 'job_unknown')).status).to.equal(404);
    expect(await usage(other), 'a 404 costs nothing').to.equal(0);
    expect(await usage(a)).to.be.closeTo(cu0 + 0.1, 1e-9);

    const t0 = Date.now();
    const r = await cancel(a, running.job_id);
    expect(r.status).to.equal(200);
    const ended = await waitFor(a, running.job_id, finished, { timeoutMs: 5000, what: 'the running job to end' });
    expect(Date.now() - t0).to.be.below(5000);
    expect(ended.error).to.include({ code: 'cancelled' });
    expect(ended.progress.steps_completed).to.be.at.least(0);

    const cu1 = await usage(a);
    const again = await cancel(a, running.job_id);
    expect(again.status).to.equal(409);
    expect(again.body).to.include({ code: 'job_finished', status: 409, job_status: 'failed' });
    expect(await usage(a), 'a 409 costs nothing').to.equal(cu1);
  });

  it('deactivating a tenant cancels its queued and running jobs within 5 s', async () => {
    const d = await tenantClient(server);
    const running = await launch(d, LONG);
    await waitFor(d, running.job_id, (s) => s.status === 'running', { what: 'the job to run' });
    const queued = await launch(d, SHORT);
    const t0 = Date.now();
    expect((await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: d.tenantId })).status).to.equal(200);
    const failedJobs = () =>
      new Set(
        logRecords(server)
          .filter(
            (l) => (l.msg === 'simulation job failed' || l.msg === 'simulation job failed before it started') && l.code === 'cancelled',
          )
          .map((l) => l.job_id as string),
      );
    while (!(failedJobs().has(running.job_id) && failedJobs().has(queued.job_id))) {
      expect(Date.now() - t0, 'both jobs cancelled within 5 s').to.be.below(5000);
      await new Promise((r) => setTimeout(r, 50));
    }
    started.length = 0; // the tenant's key no longer works
  });

  it('a job past params.max_seconds of run time fails with time_limit', async () => {
    const a = await tenantClient(server);
    const job = await launch(a, { ...LONG, params: { ...LONG.params, max_seconds: 1 } });
    const done = await waitFor(a, job.job_id, finished, { timeoutMs: 20000, what: 'the budget to run out' });
    expect(done.status).to.equal('failed');
    expect(done.error).to.include({ code: 'time_limit' });
    expect(done.progress.elapsed_s).to.be.within(1, 4);
  });

  it('a tenant holds at most SVC_GATE_JOBS_QUEUED_PER_TENANT queued jobs: 429 too_many_jobs, nothing stored, no CU', async () => {
    const a = await tenantClient(server);
    const running = await launch(a, LONG);
    await waitFor(a, running.job_id, (s) => s.status === 'running', { what: 'the job to run' });
    await launch(a, SHORT);
    await launch(a, SHORT);
    const cu = await usage(a);
    const listed = (await a.call('GET', '/v1/simulation/list')).body.count;
    const r = await a.call('POST', '/v1/simulation/submit', { json: SHORT });
    expect(r.status).to.equal(429);
    expect(r.body).to.include({ code: 'too_many_jobs', limit: 2 });
    expect(r.headers.get('retry-after')).to.equal(String(QUANTUM_S));
    expect(await usage(a)).to.be.closeTo(cu + 0.1, 1e-9); // the list call above
    expect((await a.call('GET', '/v1/simulation/list')).body.count).to.equal(listed);
  });
});
