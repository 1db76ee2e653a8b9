// CONTRACT.md section 5 across nodes: two servers over one PostgreSQL database never together take a
// tenant past its monthly quota, and either reports what both charged. Needs TTSTORE_TEST_DATABASE_URL
// (shown as pending otherwise).
import { expect } from 'chai';
import { TEST_DATABASE_URL, testDatabase, type TestDatabase } from '../helpers/pg.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { admin, createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

(TEST_DATABASE_URL ? describe : describe.skip)('gate: the monthly quota across two nodes on PostgreSQL', function () {
  let db: TestDatabase;
  let nodes: TestServer[] = [];
  let t: CreatedTenant;
  /** The bytes the admitted puts of the first test stored. */
  let storedByPuts = 0;

  before(async () => {
    db = await testDatabase();
    const env = { SVC_GATE_DATABASE_URL: db.url, SVC_GATE_TENANT_INFLIGHT: '1024' };
    nodes.push(await startServer({ env }));
    // Created before the second node starts, which loads the tenants then.
    t = await createTenant(nodes[0]!, { rate_limit: { requests: 1000, window_s: 60 }, monthly_quota: 10 });
    nodes.push(await startServer({ env }));
  });
  after(async () => {
    await Promise.all(nodes.map((n) => n.destroy()));
    nodes = [];
    await db?.drop();
  });

  it('admits exactly the quota of concurrent puts (1 CU each) sent to both nodes, and both report it', async () => {
    const put = (i: number) =>
      http(nodes[i % 2]!.url, 'POST', '/v1/put', {
        json: { key: `k${i}`, data_b64: Buffer.from(`v${i}`).toString('base64') },
        headers: tenantHeaders(t),
      });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => put(i)));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).to.have.length(10);
    storedByPuts = replies.filter((r) => r.status === 200).reduce((sum, r) => sum + (r.body.original_bytes as number), 0);
    expect(statuses.filter((s) => s === 402)).to.have.length(20);
    for (const n of nodes) expect((await admin(n, 'GET', `/gate/admin/usage/${t.tenant_id}`)).body.cus_used).to.equal(10);
  });

  it('either node reports the bytes both stored for the tenant', async () => {
    // the puts above, about half stored by each node (the quota now refuses any request that costs CU)
    expect(storedByPuts).to.be.greaterThan(0);
    for (const n of nodes) {
      expect((await admin(n, 'GET', `/gate/admin/usage/${t.tenant_id}`)).body.stored_bytes).to.equal(storedByPuts);
      const all = (await admin(n, 'GET', '/gate/admin/usage')).body.tenants as Array<{ tenant_id: string; stored_bytes: number }>;
      expect(all.find((u) => u.tenant_id === t.tenant_id)!.stored_bytes).to.equal(storedByPuts);
    }
  });
});
