// While a job runs: its progress is visible and moves, and the storage API stays responsive
// (GET /v1/get p99 under 50 ms, the solver runs on the engine's threads, not the event loop).
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { jobStatus, slowPoisson, startSimServer, submit, tenantClient, waitCompleted, waitFor, type Client } from './helpers.js';

describe('simulation: a running job', () => {
  let server: TestServer;
  let c: Client;

  before(async () => {
    server = await startSimServer();
    c = await tenantClient(server);
  });
  after(async () => {
    await server.destroy();
  });

  it('shows steps_completed, steps_total and elapsed_s moving while it runs', async () => {
    const job = await submit(c, { solver: 'poisson_2d', output_key_prefix: 'progress', params: slowPoisson(11, 200) });
    expect(job.status).to.equal('queued');
    const seen = [];
    let s = await waitFor(c, job.job_id, (x) => x.status === 'running' && x.progress.steps_completed > 0, { what: 'the job to start' });
    while (s.status === 'running') {
      seen.push(s);
      await new Promise((r) => setTimeout(r, 100));
      s = await jobStatus(c, job.job_id);
    }
    expect(seen.length).to.be.at.least(3);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]!.progress.steps_completed).to.be.at.least(seen[i - 1]!.progress.steps_completed);
      expect(seen[i]!.progress.elapsed_s).to.be.above(seen[i - 1]!.progress.elapsed_s);
    }
    const mid = seen.find((x) => x.progress.steps_completed < x.progress.steps_total);
    expect(mid, 'a status with 0 < steps_completed < steps_total').to.not.equal(undefined);
    expect(mid!.progress.steps_total).to.be.at.most(200);
    expect(mid!.started_at).to.be.a('number');
    const done = await waitCompleted(c, job.job_id);
    expect(done.progress.steps_completed).to.equal(200);
  });

  it('keeps GET /v1/get p99 under 50 ms while a job runs', async () => {
    const data = new Float64Array(4096).map((_, i) => Math.sin(i / 100));
    const { npyOf } = await import('../storage/helpers.js');
    expect((await c.put({ key: 'probe', data_b64: npyOf('float64', [4096], data).toString('base64') })).status).to.equal(200);
    const job = await submit(c, { solver: 'poisson_2d', output_key_prefix: 'busy', params: slowPoisson(12, 400) });
    await waitFor(c, job.job_id, (x) => x.status === 'running' && x.progress.steps_completed > 0, { what: 'the job to start' });
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      const r = await c.call('GET', '/v1/get/default/probe');
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      expect(r.status).to.equal(200);
      if (i % 4 === 3) await new Promise((res) => setTimeout(res, 5));
    }
    const during = await jobStatus(c, job.job_id);
    expect(during.status, 'the job was still running when the last request was answered').to.equal('running');
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length * 0.5)]!;
    const p99 = times[Math.ceil(times.length * 0.99) - 1]!;
    console.log(
      `      GET /v1/get during ${job.solver} n_bits ${job.params.n_bits}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms`,
    );
    expect(p99).to.be.below(50);
    await c.call('GET', `/v1/simulation/status/${job.job_id}`);
  });
});
