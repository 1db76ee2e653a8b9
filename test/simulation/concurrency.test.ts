// SVC_GATE_SIM_CONCURRENCY caps the jobs running at once; jobs start in submission order.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { jobStatus, slowPoisson, startSimServer, submit, tenantClient, waitCompleted, type Client, type JobStatusBody } from './helpers.js';

/** Submit `n` jobs, then poll all of them until they finish; returns the most seen running at once and the final states. */
async function runAll(c: Client, params: Record<string, unknown>, n: number): Promise<{ maxRunning: number; jobs: JobStatusBody[] }> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await submit(c, { solver: 'poisson_2d', output_key_prefix: `cap/${i}`, params })).job_id);
  let maxRunning = 0;
  for (;;) {
    const states = await Promise.all(ids.map((id) => jobStatus(c, id)));
    maxRunning = Math.max(maxRunning, states.filter((s) => s.status === 'running').length);
    if (states.every((s) => s.status === 'completed' || s.status === 'failed')) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { maxRunning, jobs: await Promise.all(ids.map((id) => waitCompleted(c, id))) };
}

describe('simulation: concurrency cap and FIFO order', () => {
  let server: TestServer | undefined;

  afterEach(async () => {
    await server?.destroy();
    server = undefined;
  });

  it('runs one job at a time by default, in submission order', async () => {
    server = await startSimServer();
    const c = await tenantClient(server);
    const { maxRunning, jobs } = await runAll(c, slowPoisson(10, 60), 3);
    expect(maxRunning).to.equal(1);
    for (let i = 1; i < jobs.length; i++) {
      expect(jobs[i]!.started_at!).to.be.at.least(jobs[i - 1]!.finished_at!);
    }
  });

  it('runs up to SVC_GATE_SIM_CONCURRENCY jobs at once, never more, starting them in order', async () => {
    server = await startSimServer({ env: { SVC_GATE_SIM_CONCURRENCY: '2' } });
    const c = await tenantClient(server);
    const { maxRunning, jobs } = await runAll(c, slowPoisson(10, 60), 4);
    expect(maxRunning).to.equal(2);
    const starts = jobs.map((j) => j.started_at!);
    expect([...starts].sort((a, b) => a - b)).to.deep.equal(starts);
    // the third job started only once one of the first two had finished
    expect(jobs[2]!.started_at!).to.be.at.least(Math.min(jobs[0]!.finished_at!, jobs[1]!.finished_at!));
  });
});
