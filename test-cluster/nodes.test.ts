// Two ttstore processes sharing Redis (rate limits, change announcements) and S3 (blobs). Without
// PostgreSQL they share one SQLite file on this machine, which is enough for what is tested here: the
// limit is one across both, and what one node changes, the other's caches no longer hold.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generateApiKey, sha256Hex } from '../src/gate/keys.js';
import { openSqliteStores } from '../src/store/sqlite/index.js';
import { http, startServer, type Reply, type TestServer } from '../test/helpers/server.js';
import { admin, createTenant, randomTenantId, tenantHeaders } from '../test/helpers/tenants.js';
import { clusterEnv, nodeEnv } from './env.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cluster: two nodes on one Redis', function () {
  this.timeout(120_000);
  const env = clusterEnv();
  let dataDir: string;
  let a: TestServer;
  let b: TestServer;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-cluster-'));
    const vars = nodeEnv(env, `nodes-${randomBytes(4).toString('hex')}`);
    a = await startServer({ dataDir, env: vars });
    b = await startServer({ dataDir, env: vars });
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await rm(dataDir, { recursive: true, force: true });
  });

  const list = (node: TestServer, key: string): Promise<Reply> =>
    http(node.url, 'GET', '/v1/list/default', { headers: { 'X-Api-Key': key } });

  it("admits exactly a starter tenant's 10 of 30 concurrent requests spread over both nodes, with one count in the headers", async () => {
    const t = await createTenant(a, { plan: 'starter' });
    await sleep(200); // node b learns of the new tenant from a's announcement
    const nodeOf = (i: number) => (i % 2 === 0 ? a : b);
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => list(nodeOf(i), t.api_key)));
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(admitted.length).to.equal(10);
    expect(refused.length).to.equal(20);
    expect(admitted.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y)).to.deep.equal([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    for (const r of refused) {
      expect(r.headers.get('x-ratelimit-limit')).to.equal('10');
      expect(r.headers.get('x-ratelimit-remaining')).to.equal('0');
      expect(Number(r.headers.get('retry-after'))).to.be.within(59, 60);
      expect(r.body.retry_after_s).to.equal(Number(r.headers.get('retry-after')));
    }
    // each node had 15 and would have admitted 10 of them alone (20 in all); both now refuse
    expect((await list(a, t.api_key)).status).to.equal(429);
    expect((await list(b, t.api_key)).status).to.equal(429);
  });

  it('a key rotated on node a is refused by node b within one second; the new key works there', async () => {
    const t = await createTenant(a);
    await sleep(200);
    expect((await list(b, t.api_key)).status).to.equal(200); // b holds the tenant in its registry
    const rot = await admin(a, 'POST', '/gate/onboard/rotate-key', { tenant_id: t.tenant_id });
    expect(rot.status).to.equal(200);
    const rotatedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - rotatedAt < 1000) {
      status = (await list(b, t.api_key)).status;
      if (status === 200) await sleep(20);
    }
    expect(status).to.equal(401);
    expect((await list(b, rot.body.api_key)).status).to.equal(200);
  });

  it('a tenant deactivated on node b is refused by node a within one second', async () => {
    const t = await createTenant(b);
    await sleep(200);
    expect((await list(a, t.api_key)).status).to.equal(200);
    expect((await admin(b, 'POST', '/gate/admin/deactivate', { tenant_id: t.tenant_id })).status).to.equal(200);
    await sleep(1000);
    expect((await list(a, t.api_key)).status).to.equal(401);
  });

  it("a put acknowledged by node a is what node b's next get returns, though b had cached the older version", async () => {
    const t = await createTenant(a);
    await sleep(200);
    const get = (node: TestServer) => http(node.url, 'GET', '/v1/get/default/k', { headers: tenantHeaders(t) });
    const put = (node: TestServer, text: string) =>
      http(node.url, 'POST', '/v1/put', { json: { key: 'k', data_b64: Buffer.from(text).toString('base64') }, headers: tenantHeaders(t) });
    expect((await put(a, 'one')).status).to.equal(200);
    expect((await get(b)).body.version).to.equal(1);
    expect((await get(b)).body.version).to.equal(1); // now in b's row cache
    expect((await put(a, 'two')).body.version).to.equal(2);
    expect((await get(b)).body.version).to.equal(2);
    const served = await http(b.url, 'POST', '/v1/serve', { json: { key: 'k' }, headers: tenantHeaders(t) });
    expect(Buffer.from(served.body.data_b64, 'base64').toString()).to.equal('two');
  });

  it('POST /gate/admin/reload on node a reloads node b too', async () => {
    // a tenant written to the metadata store behind both nodes' backs (as a restore or a migration would)
    const stores = await openSqliteStores(path.join(dataDir, 'ttstore.db'));
    const apiKey = generateApiKey();
    try {
      const row = await stores.tenants.insert({
        tenant_id: randomTenantId('restored'),
        plan: 'enterprise',
        namespaces: '["default"]',
        email: null,
        key_hash: sha256Hex(apiKey),
        rate_limit_requests: 1000,
        rate_limit_window_s: 60,
        monthly_quota: 1_000_000,
        storage_quota_bytes: null,
        created_at: Date.now() / 1000,
      });
      expect(row).to.not.equal(null);
    } finally {
      await stores.close();
    }
    expect((await list(b, apiKey)).status).to.equal(401);
    expect((await admin(a, 'POST', '/gate/admin/reload')).status).to.equal(200);
    await sleep(200);
    expect((await list(b, apiKey)).status).to.equal(200);
  });
});
