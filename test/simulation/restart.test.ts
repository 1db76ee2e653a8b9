// An accepted job survives the server: killed with SIGKILL while the job runs, or stopped with
// SIGTERM (which cancels the run), the job is queued again at the next start and completes, with
// one version of each output and no leftovers of the interrupted attempt.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/tenants.js';
import { clientFor, countBlobs, jobStatus, slowPoisson, startSimServer, submit, waitCompleted, waitFor } from './helpers.js';

describe('simulation: jobs survive restarts', () => {
  let dataDir: string;
  let server: TestServer | undefined;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-sim-restart-'));
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  const restartAndFinish = async (apiKey: string, tenantId: string, jobIds: string[]) => {
    server = await startSimServer({ dataDir });
    const c = clientFor(server, apiKey, tenantId);
    const results = [];
    for (const id of jobIds) results.push(await waitCompleted(c, id));
    return { c, results };
  };

  it('re-queues a job that was running when the server was killed (SIGKILL), and completes it', async () => {
    server = await startSimServer({ dataDir });
    const t = await createTenant(server);
    let c = clientFor(server, t.api_key, t.tenant_id);
    const running = await submit(c, {
      solver: 'poisson_2d',
      output_key_prefix: 'killed',
      params: { ...slowPoisson(11, 300), snapshot_every: 50 },
    });
    const queued = await submit(c, { solver: 'poisson_2d', output_key_prefix: 'behind', params: { n_bits: 9 } });
    await waitFor(c, running.job_id, (s) => s.status === 'running' && s.progress.steps_completed >= 50, {
      what: 'the job to make progress',
    });
    // the first snapshot's blob is durable (its row is not: it commits only with the job)
    for (const t0 = Date.now(); (await countBlobs(dataDir)) === 0;) {
      if (Date.now() - t0 > 60000) throw new Error('no snapshot blob was written');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await jobStatus(c, running.job_id)).status).to.equal('running');
    expect((await jobStatus(c, queued.job_id)).status).to.equal('queued');
    await server.stop('SIGKILL');
    const blobsAfterKill = await countBlobs(dataDir); // snapshots of the killed attempt, never committed

    server = await startSimServer({ dataDir });
    c = clientFor(server, t.api_key, t.tenant_id);
    const after = await jobStatus(c, running.job_id);
    expect(['queued', 'running']).to.include(after.status);
    const done = await waitCompleted(c, running.job_id);
    expect(done.progress.steps_completed).to.equal(300);
    expect(done.outputs).to.include.members(['killed/u', 'killed/f', 'killed/u/step_50', 'killed/u/step_300']);
    expect((await waitCompleted(c, queued.job_id)).outputs).to.have.members(['behind/u', 'behind/f']);
    const list = await c.call('GET', `/v1/list/default?prefix=killed/`);
    expect(list.body.total).to.equal(done.outputs!.length);
    for (const k of list.body.keys) expect(k.version, k.key).to.equal(1);
    // the orphan blobs of the killed attempt were swept at start
    expect(blobsAfterKill).to.be.above(0);
    expect(await countBlobs(dataDir)).to.equal(list.body.total + 2);
  });

  it('cancels a running job on SIGTERM, leaves it queued, and runs it at the next start', async () => {
    server = await startSimServer({ dataDir });
    const t = await createTenant(server);
    const c = clientFor(server, t.api_key, t.tenant_id);
    const job = await submit(c, { solver: 'poisson_2d', output_key_prefix: 'stopped', params: slowPoisson(11, 400) });
    await waitFor(c, job.job_id, (s) => s.status === 'running' && s.progress.steps_completed > 5, { what: 'the job to run' });
    const t0 = Date.now();
    expect(await server.stop('SIGTERM')).to.equal(0);
    expect(Date.now() - t0).to.be.below(10000); // the solver honoured the cancel
    expect(server.logs.some((l) => l.includes('cancelled by shutdown'))).to.equal(true);
    server = undefined;
    expect(await countBlobs(dataDir)).to.equal(0);

    const { results } = await restartAndFinish(t.api_key, t.tenant_id, [job.job_id]);
    expect(results[0]!.outputs).to.have.members(['stopped/u', 'stopped/f']);
    expect(results[0]!.progress.steps_completed).to.equal(400);
  });
});
