// A node of the scripts/cluster.sh cluster stopped under load through nginx: restarted gracefully
// (`cluster.sh restart-node`: drained from nginx, then SIGTERM, started, put back), no request fails;
// killed (SIGKILL), no acknowledged put is lost. Either way it comes back, so the tests after these find
// three nodes. Needs the exports of `cluster.sh start` and the TTSTORE_CLUSTER_DIR (and port settings)
// it ran with.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { http, type Reply } from '../test/helpers/server.js';
import { createTenant, tenantHeaders, type CreatedTenant } from '../test/helpers/tenants.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is unset: run \`bash scripts/cluster.sh start\` and export what it prints`);
  return v;
}

interface Acked {
  tenant: CreatedTenant;
  key: string;
  version: number;
  bytes: string;
}

describe('cluster: a node stopped under load through nginx (scripts/cluster.sh)', function () {
  this.timeout(120_000);
  const front = { url: need('TTSTORE_URL'), serviceKey: need('TTSTORE_SERVICE_KEY') };
  const nodes = need('TTSTORE_NODE_URLS').split(',');
  const stateDir = process.env.TTSTORE_CLUSTER_DIR ?? '/tmp/ttstore-cluster';
  const victim = 1; // the second node: nginx sends it every third request
  const pidOf = (i: number) => Number(readFileSync(path.join(stateDir, `node${i}.pid`), 'utf8').trim());
  const clusterSh = (...args: string[]) => promisify(execFile)('bash', [path.join(ROOT, 'scripts/cluster.sh'), ...args], { cwd: ROOT });
  const restart = () => clusterSh('start');
  /** Resolves once process `pid` is gone (a zombie counts as gone: cluster.sh's nodes are not our children). */
  const exited = async (pid: number) => {
    for (;;) {
      const stat = await promisify(execFile)('ps', ['-o', 'stat=', '-p', String(pid)]).then(
        (r) => r.stdout.trim(),
        () => '',
      );
      if (stat === '' || stat.startsWith('Z')) return;
      await sleep(100);
    }
  };

  // Restarted even when a test fails, so that later tests have three nodes.
  after(async () => {
    await restart();
  });

  /** `workers` loops of puts (each its own tenant: CONTRACT 8's in-flight limit is per tenant), until `stop`. */
  async function putLoad(workers: number, until: Promise<void>): Promise<{ acked: Acked[]; failed: Reply[] }> {
    const tenants = await Promise.all(Array.from({ length: workers }, () => createTenant(front)));
    await sleep(200); // every node learns of the tenants
    let done = false;
    void until.then(() => (done = true));
    const acked: Acked[] = [];
    const failed: Reply[] = [];
    await Promise.all(
      tenants.map(async (tenant, w) => {
        for (let i = 0; !done; i++) {
          const key = `k${i % 3}`;
          const bytes = `worker ${w} put ${i} ${Math.random()}`;
          const r = await http(front.url, 'POST', '/v1/put', {
            json: { key, data_b64: Buffer.from(bytes).toString('base64') },
            headers: tenantHeaders(tenant),
          });
          if (r.status === 200) acked.push({ tenant, key, version: r.body.version, bytes });
          else failed.push(r);
        }
      }),
    );
    return { acked, failed };
  }

  /** Every acknowledged put is served, through the balancer, as that version with its bytes. */
  async function expectReadable(acked: Acked[]): Promise<void> {
    const wrong: unknown[] = [];
    const check = async (a: Acked) => {
      const r = await http(front.url, 'POST', '/v1/serve', { json: { key: a.key, version: a.version }, headers: tenantHeaders(a.tenant) });
      const got = r.status === 200 ? Buffer.from(r.body.data_b64, 'base64').toString() : r.status;
      if (got !== a.bytes) wrong.push({ key: a.key, version: a.version, expected: a.bytes, got });
    };
    // one reader per tenant (its in-flight limit), the tenants in parallel
    const byTenant = new Map<string, Acked[]>();
    for (const a of acked) byTenant.set(a.tenant.tenant_id, [...(byTenant.get(a.tenant.tenant_id) ?? []), a]);
    await Promise.all(
      [...byTenant.values()].map(async (puts) => {
        for (const a of puts) await check(a);
      }),
    );
    expect(wrong).to.deep.equal([]);
  }

  it('a graceful restart (restart-node) during puts and gets: every request answers 2xx, every acknowledged put is readable', async () => {
    let stopLoad!: () => void;
    const until = new Promise<void>((r) => (stopLoad = r));
    const load = putLoad(6, until);
    const reads = (async () => {
      const t = await createTenant(front);
      await sleep(200);
      const put = await http(front.url, 'POST', '/v1/put', { json: { key: 'r', data_b64: 'AAAA' }, headers: tenantHeaders(t) });
      expect(put.status).to.equal(200);
      const statuses: number[] = [];
      let done = false;
      void until.then(() => (done = true));
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while (!done) statuses.push((await http(front.url, 'GET', '/v1/get/default/r', { headers: tenantHeaders(t) })).status);
        }),
      );
      return statuses;
    })();
    await sleep(1000);
    const pid = pidOf(victim);
    await clusterSh('restart-node', String(victim));
    expect(pidOf(victim)).to.not.equal(pid);
    await sleep(500); // the load meets the node put back
    stopLoad();
    const [{ acked, failed }, statuses] = await Promise.all([load, reads]);
    expect(failed.map((r) => [r.status, r.text.slice(0, 200)])).to.deep.equal([]);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(acked.length).to.be.greaterThan(0);
    await expectReadable(acked);
    for (const node of nodes) expect((await http(node, 'GET', '/gate/health')).status).to.equal(200);
    console.log(`      (graceful: ${acked.length} puts and ${statuses.length} gets, none failed)`);
  });

  it('SIGKILL of a node during puts loses no acknowledged put, and the node comes back', async () => {
    let stopLoad!: () => void;
    const load = putLoad(6, new Promise<void>((r) => (stopLoad = r)));
    await sleep(700);
    const pid = pidOf(victim);
    process.kill(pid, 'SIGKILL');
    await sleep(500);
    stopLoad();
    const { acked, failed } = await load;
    // Puts in flight on the killed node may fail (502): nginx never resends a put it may have stored.
    expect(failed.map((r) => r.status).filter((s) => s !== 502)).to.deep.equal([]);
    expect(acked.length).to.be.greaterThan(0);
    await exited(pid);
    await restart();
    expect(pidOf(victim)).to.not.equal(pid);
    await expectReadable(acked);
    for (const node of nodes) expect((await http(node, 'GET', '/gate/health')).status).to.equal(200);
    console.log(`      (killed: ${acked.length} puts acknowledged and read back, ${failed.length} failed)`);
  });
});
