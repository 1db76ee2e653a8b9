// Simulation jobs across the three nodes scripts/cluster.sh starts (its env file and exports sourced):
// the store is the queue, any node runs a job; when the node running one is killed, another node
// takes it over once its lease runs out and finishes it once, with no duplicate outputs; a cancel
// sent to another node than the one running the job stops it.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { http } from '../test/helpers/server.js';
import { adminHeaders, createTenant, tenantHeaders, type CreatedTenant } from '../test/helpers/tenants.js';
import { JOB_LEASE_S } from '../src/jobs/lease.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is unset: run \`bash scripts/cluster.sh start\`, source its env file and export what it prints`);
  return v;
}

describe('cluster: simulation jobs on any node (scripts/cluster.sh start)', function () {
  this.timeout(180_000);
  const front = { url: need('TTSTORE_URL'), serviceKey: need('TTSTORE_SERVICE_KEY') };
  const nodes = need('TTSTORE_NODE_URLS').split(',');
  const clusterDir = need('TTSTORE_CLUSTER_DIR');
  let t: CreatedTenant;

  before(async () => {
    t = await createTenant(front, { plan: 'pro' });
    await sleep(200); // every node learns of the tenant
  });

  /** A Poisson solve of a few seconds, with snapshots (outputs a duplicate run would store twice). */
  const submit = async (node: string, prefix: string) => {
    const r = await http(node, 'POST', '/v1/simulation/submit', {
      json: {
        solver: 'poisson_2d',
        output_key_prefix: prefix,
        params: { n_bits: 10, rhs: 'dipole', preconditioner: 'none', tol: 1e-14, max_iters: 200, snapshot_every: 100 },
      },
      headers: tenantHeaders(t),
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    return r.body.job_id as string;
  };
  const status = async (node: string, id: string) =>
    (await http(node, 'GET', `/v1/simulation/status/${id}`, { headers: tenantHeaders(t) })).body;
  /** The nodes running a simulation job now (their ttstore_jobs_running gauge). */
  const running = async (): Promise<number[]> => {
    const counts = await Promise.all(
      nodes.map(async (node) => {
        const text = await fetch(`${node}/gate/metrics`, { headers: adminHeaders(front) }).then((r) => (r.ok ? r.text() : ''));
        return Number(/^ttstore_jobs_running (\S+)$/m.exec(text)?.[1] ?? 0);
      }),
    );
    return counts.flatMap((n, i) => (n > 0 ? [i] : []));
  };
  const nodeRunning = async (id: string): Promise<number> => {
    for (const t0 = Date.now(); Date.now() - t0 < 30_000; await sleep(100)) {
      const on = await running();
      if (on.length === 1 && (await status(front.url, id)).status === 'running') return on[0]!;
    }
    throw new Error(`job ${id} never ran on one node`);
  };
  const waitEnded = async (node: string, id: string, ms: number) => {
    for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(250)) {
      const s = await status(node, id);
      if (s.status === 'completed' || s.status === 'failed') return s;
    }
    throw new Error(`job ${id} did not end within ${ms} ms`);
  };

  it('the node running a job is killed (SIGKILL): another node runs it again and finishes it once, no duplicate outputs', async () => {
    const id = await submit(front.url, 'killed');
    const victim = await nodeRunning(id);
    const pid = Number(await readFile(path.join(clusterDir, `node${victim}.pid`), 'utf8'));
    process.kill(pid, 'SIGKILL');
    const killedAt = Date.now();
    try {
      const survivor = nodes[(victim + 1) % nodes.length]!;
      const done = await waitEnded(survivor, id, (JOB_LEASE_S + 90) * 1000);
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
      expect(Date.now() - killedAt).to.be.greaterThan((JOB_LEASE_S - 1) * 1000); // not before the lease ran out
      const outputs = done.outputs as string[];
      expect(outputs).to.include.members(['killed/u/step_100', 'killed/u/step_200', 'killed/u']);
      expect(new Set(outputs).size).to.equal(outputs.length);
      const listed = await http(survivor, 'GET', '/v1/list/default?prefix=killed/', { headers: tenantHeaders(t) });
      expect(listed.status).to.equal(200);
      const entries = listed.body.keys as Array<{ key: string; version: number }>;
      expect(entries.map((e) => e.key).sort()).to.deep.equal([...outputs].sort());
      expect(entries.every((e) => e.version === 1)).to.equal(true); // one committed run: no second version of any output
    } finally {
      // `start` is idempotent: it starts only what is not running (the killed node), so later tests have three nodes.
      await promisify(execFile)('bash', [path.join(ROOT, 'scripts/cluster.sh'), 'start'], { env: process.env });
    }
    expect((await http(nodes[victim]!, 'GET', '/gate/health')).status).to.equal(200);
  });

  it('a cancel sent to another node than the one running the job stops it within a second or so', async () => {
    const id = await submit(front.url, 'cancelled');
    const holder = await nodeRunning(id);
    const other = nodes[(holder + 1) % nodes.length]!;
    const t0 = Date.now();
    const r = await http(other, 'POST', `/v1/simulation/cancel/${id}`, { headers: tenantHeaders(t) });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.status).to.equal('failed');
    expect(r.body.error.code).to.equal('cancelled');
    expect(Date.now() - t0).to.be.below(2500);
    expect(await running()).to.deep.equal([]);
  });
});
