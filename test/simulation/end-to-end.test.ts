// A simulation from submission to a served field, over HTTP with the real engine: poisson_2d on the
// 512 x 512 grid, polled to completion, its outputs listed, read and reconstructed as ordinary entries.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { jobStatus, startSimServer, submit, tenantClient, waitCompleted, type Client } from './helpers.js';

describe('simulation: submit, poll, list and serve (poisson_2d and euler_2d, n_bits 9)', () => {
  let server: TestServer;
  let c: Client;

  before(async () => {
    server = await startSimServer();
    c = await tenantClient(server, ['default', 'sims']);
  });
  after(async () => {
    await server.destroy();
  });

  it('runs the job to completion and serves its fields as entries', async () => {
    const r = await c.call('POST', '/v1/simulation/submit', {
      json: { solver: 'poisson_2d', namespace: 'sims', output_key_prefix: 'runs/p9', params: { n_bits: 9 } },
    });
    expect(r.status, r.text).to.equal(202);
    expect(r.body).to.include({ solver: 'poisson_2d', status: 'queued', namespace: 'sims', output_key_prefix: 'runs/p9' });
    expect(r.body.job_id).to.match(/^job_[A-Za-z0-9_-]{16}$/);
    expect(r.headers.get('location')).to.equal(`/v1/simulation/status/${r.body.job_id}`);
    const jobId = r.body.job_id as string;

    const done = await waitCompleted(c, jobId);
    expect(done).to.include({ job_id: jobId, status: 'completed', solver: 'poisson_2d', namespace: 'sims', output_key_prefix: 'runs/p9' });
    expect(done.params).to.deep.equal({
      n_bits: 9,
      rhs: 'manufactured',
      tol: 1e-8,
      preconditioner: 'multigrid',
      seed: 0,
      max_seconds: 3600,
    });
    expect(done.outputs).to.have.members(['runs/p9/u', 'runs/p9/f']);
    expect(done.progress.steps_completed).to.be.above(0);
    expect(done.progress.steps_completed).to.equal(done.progress.steps_total);
    expect(done.progress.elapsed_s).to.be.above(0);
    expect(done.started_at).to.be.at.least(done.created_at);
    expect(done.finished_at).to.be.at.least(done.started_at!);
    expect(done.stats!.converged).to.equal(1);
    expect(done).to.not.have.property('error');

    const list = await c.call('GET', `/v1/list/sims?prefix=${encodeURIComponent('runs/p9/')}`);
    expect(list.body.keys.map((k: { key: string }) => k.key)).to.deep.equal(['runs/p9/f', 'runs/p9/u']);
    for (const k of list.body.keys) expect(k.version).to.equal(1);

    const got = await c.call('GET', `/v1/get/sims/${encodeURIComponent('runs/p9/u')}`);
    expect(got.status).to.equal(200);
    expect(got.body.metadata).to.deep.equal({
      solver: 'poisson_2d',
      job_id: jobId,
      field: 'u',
      step: done.stats!.steps,
      t: 0,
      n_bits: 9,
      params: done.params,
    });
    expect(got.body.shape).to.deep.equal([512, 512]);
    expect(got.body.dtype).to.equal('float64');
    expect(['exact', 'safe', 'passthrough']).to.include(got.body.oracle_verdict);

    // u approximates sin(pi x) sin(pi y) at x_i = (i + 1) h, h = 1 / 513 (second order: error ~ h^2)
    const n = 512;
    const h = 1 / (n + 1);
    const u = await c.dense('runs/p9/u', { namespace: 'sims' });
    expect(u.shape).to.deep.equal([n, n]);
    const uv = new Float64Array(u.data.buffer, u.data.byteOffset, n * n);
    let maxErr = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const exact = Math.sin(Math.PI * (i + 1) * h) * Math.sin(Math.PI * (j + 1) * h);
        maxErr = Math.max(maxErr, Math.abs(uv[i * n + j]! - exact));
      }
    }
    expect(maxErr).to.be.below(1e-4);
    const f = await c.dense('runs/p9/f', { namespace: 'sims' });
    const fv = new Float64Array(f.data.buffer, f.data.byteOffset, n * n);
    const at = (i: number, j: number) => 2 * Math.PI ** 2 * Math.sin(Math.PI * (i + 1) * h) * Math.sin(Math.PI * (j + 1) * h);
    expect(fv[100 * n + 300]!).to.be.closeTo(at(100, 300), 1e-3);

    const jobs = await c.call('GET', '/v1/simulation/list');
    expect(jobs.status).to.equal(200);
    expect(jobs.body.count).to.equal(1);
    expect(jobs.body.jobs[0]).to.deep.equal(await jobStatus(c, jobId));
  });

  it('lists jobs newest first, filtered by namespace and status, up to limit', async () => {
    const ids: string[] = [];
    for (const ns of ['default', 'sims', 'default']) {
      ids.push(
        (await submit(c, { solver: 'poisson_2d', namespace: ns, output_key_prefix: `list/${ids.length}`, params: { n_bits: 9 } })).job_id,
      );
    }
    for (const id of ids) await waitCompleted(c, id);
    const all = await c.call('GET', '/v1/simulation/list');
    expect(all.body.count).to.equal(4);
    expect(all.body.jobs.slice(0, 3).map((j: { job_id: string }) => j.job_id)).to.deep.equal([...ids].reverse());
    const two = await c.call('GET', '/v1/simulation/list?limit=2');
    expect(two.body.jobs.map((j: { job_id: string }) => j.job_id)).to.deep.equal([ids[2], ids[1]]);
    const def = await c.call('GET', '/v1/simulation/list?namespace=default&status=completed');
    expect(def.body.jobs.map((j: { job_id: string }) => j.job_id)).to.deep.equal([ids[2], ids[0]]);
    expect((await c.call('GET', '/v1/simulation/list?status=failed')).body).to.deep.equal({ jobs: [], count: 0 });
  });

  it('stores snapshots as {prefix}/{field}/step_{n} when params.snapshot_every is set', async () => {
    const job = await submit(c, {
      solver: 'poisson_2d',
      output_key_prefix: 'snap',
      params: { n_bits: 9, rhs: 'dipole', snapshot_every: 2, preconditioner: 'none', max_iters: 6, tol: 1e-12 },
    });
    const done = await waitCompleted(c, job.job_id);
    const snaps = done.outputs!.filter((k) => /\/step_\d+$/.test(k));
    expect(snaps.length).to.be.above(0);
    for (const k of snaps) {
      expect(k).to.match(/^snap\/[a-z]+\/step_\d+$/);
      const got = await c.call('GET', `/v1/get/default/${encodeURIComponent(k)}`);
      expect(got.status).to.equal(200);
      expect(got.body.metadata.step).to.equal(Number(k.split('_').pop()));
      expect(got.body.metadata.step % 2).to.equal(0);
      expect(got.body.metadata.job_id).to.equal(job.job_id);
    }
  });
  it('runs euler_2d (isentropic vortex, 512 x 512) and serves rho, u, v and p as entries', async () => {
    const job = await submit(c, { solver: 'euler_2d', namespace: 'sims', output_key_prefix: 'vortex', params: { n_bits: 9, steps: 2 } });
    const done = await waitCompleted(c, job.job_id);
    expect(done.params).to.deep.equal({ n_bits: 9, problem: 'isentropic_vortex', steps: 2, cfl: 0.4, seed: 0, max_seconds: 3600 });
    expect(done.outputs).to.have.members(['vortex/rho', 'vortex/u', 'vortex/v', 'vortex/p']);
    expect(done.progress.steps_completed).to.equal(2);
    expect(done.stats!.t).to.be.above(0);
    const got = await c.call('GET', `/v1/get/sims/${encodeURIComponent('vortex/rho')}`);
    expect(got.body.metadata).to.deep.include({ solver: 'euler_2d', field: 'rho', step: 2, t: done.stats!.t, n_bits: 9 });
    const rho = await c.dense('vortex/rho', { namespace: 'sims' });
    expect(rho.shape).to.deep.equal([512, 512]);
    const r = new Float64Array(rho.data.buffer, rho.data.byteOffset, 512 * 512);
    // the free stream has density 1 and the vortex a density well below it at its centre (5, 5)
    let mass = 0;
    let min = Infinity;
    for (const x of r) {
      mass += x;
      min = Math.min(min, x);
    }
    const h = 10 / 512;
    expect(mass * h * h).to.be.closeTo(done.stats!.mass!, 1e-4 * done.stats!.mass!);
    expect(min).to.be.within(0.3, 0.9);
    expect(r[0]!).to.be.closeTo(1, 1e-3);
  });
});
