// CONTRACT.md section 5: CU charged for 2xx only, by operation, per UTC month, durable; the quota
// never overshot under concurrency.
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { http, startServer, waitForLogRecords, type Reply, type TestServer } from '../helpers/server.js';
import { admin, createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
// 100 concurrent puts of one tenant test the quota, not the cap on engine requests in flight.
const env = { SVC_GATE_TENANT_INFLIGHT: '1024' };

describe('gate: metering and quotas', () => {
  let server: TestServer;
  const call = (t: CreatedTenant, method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    http(server.url, method, path, { json, headers: { ...tenantHeaders(t), ...headers } });
  const usage = async (t: CreatedTenant) => (await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`)).body;

  before(async () => {
    server = await startServer({ env });
  });
  after(async () => {
    const dir = server.dataDir;
    await server.destroy();
    await rm(dir, { recursive: true, force: true }); // a restarted server does not own its directory
  });

  it('a scripted mix costs exactly its CU by operation; 4xx, 304 and 429 cost nothing', async () => {
    const t = await createTenant(server, { rate_limit: { requests: 17, window_s: 60 }, monthly_quota: 1000 });
    const expectStatus = async (p: Promise<Reply>, s: number): Promise<Reply> => {
      const r = await p;
      expect(r.status, r.text).to.equal(s);
      return r;
    };
    await expectStatus(call(t, 'POST', '/v1/put', { key: 'a', data_b64: b64('alpha') }), 200); // 1.0 put
    await expectStatus(call(t, 'POST', '/v1/put', { key: 'b', data_b64: b64('beta') }), 200); // 1.0 put
    const got = await expectStatus(call(t, 'GET', '/v1/get/default/a'), 200); // 0.1 get
    await expectStatus(call(t, 'GET', '/v1/get/default/b'), 200); // 0.1 get
    await expectStatus(call(t, 'GET', '/v1/list/default'), 200); // 0.1 list
    await expectStatus(call(t, 'POST', '/v1/serve', { key: 'a' }), 200); // 0.5 serve
    await expectStatus(call(t, 'DELETE', '/v1/delete/default/b'), 200); // 0.1 delete
    // free: 404, 400, 403, 304
    await expectStatus(call(t, 'GET', '/v1/get/default/b'), 404);
    await expectStatus(call(t, 'POST', '/v1/put', { key: 'c' }), 400);
    await expectStatus(call(t, 'GET', '/v1/list/elsewhere'), 403);
    await expectStatus(call(t, 'POST', '/v1/serve', { key: 'nope' }), 404);
    const etag = got.headers.get('etag');
    expect(etag).to.be.a('string');
    await expectStatus(call(t, 'GET', '/v1/get/default/a', undefined, { 'If-None-Match': etag! }), 304);
    // 12 requests so far; 5 more lists fill the window of 17, then 429s
    for (let i = 0; i < 5; i++) await expectStatus(call(t, 'GET', '/v1/list/default'), 200); // 0.5 list
    await expectStatus(call(t, 'GET', '/v1/list/default'), 429);
    await expectStatus(call(t, 'POST', '/v1/put', { key: 'z', data_b64: b64('zeta') }), 429);

    const u = await usage(t);
    expect(u.cus_used).to.equal(3.4);
    expect(u.breakdown).to.deep.equal({
      put: 2,
      get: 0.2,
      list: 0.6,
      serve: 0.5,
      query_topk: 0,
      search: 0,
      delete: 0.1,
      simulation: 0,
    });
    expect(u.monthly_quota).to.equal(1000);
    expect(u.utilization).to.equal(0.0034);
    expect(u.period).to.equal(new Date().toISOString().slice(0, 7));
  });

  it('100 concurrent puts against a quota with room for 37 give exactly 37 successes; the rest are 402 and store nothing', async () => {
    const t = await createTenant(server, { rate_limit: { requests: 1000, window_s: 60 }, monthly_quota: 37.15 });
    const rs = await Promise.all(
      Array.from({ length: 100 }, (_, i) => call(t, 'POST', '/v1/put', { key: `k${i}`, data_b64: b64(`value ${i}`) })),
    );
    const ok = rs.filter((r) => r.status === 200);
    const refused = rs.filter((r) => r.status === 402);
    expect(ok.length, rs.map((r) => r.status).join(',')).to.equal(37);
    expect(refused.length).to.equal(63);
    expect(refused[0]!.body).to.include({ code: 'quota_exceeded', monthly_quota: 37.15 });
    const u = await usage(t);
    expect(u.cus_used).to.equal(37);
    expect(u.breakdown.put).to.equal(37);
    // a 402 did nothing: exactly the 37 admitted keys exist (a list of 0.1 CU still fits in the quota)
    const list = await call(t, 'GET', '/v1/list/default');
    expect(list.status).to.equal(200);
    expect(list.body.total).to.equal(37);
    // 37.1 used of 37.15: a get (0.1) no longer fits
    const over = await call(t, 'GET', `/v1/get/default/${ok[0]!.body.key}`);
    expect(over.status).to.equal(402);
    expect(over.headers.get('x-ratelimit-limit')).to.equal('1000');
  });

  it('CU are exact sums of thousandths: three lists are 0.3 CU in usage, in /gate/metrics and in the request log', async () => {
    const t = await createTenant(server);
    const metricOf = (text: string, op: string): string | undefined =>
      new RegExp(`^ttstore_gate_cu_charged_total\\{operation="${op}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    const before = metricOf((await admin(server, 'GET', '/gate/metrics')).text, 'list') ?? '0';
    for (let i = 0; i < 3; i++) expect((await call(t, 'GET', '/v1/list/default')).status).to.equal(200);
    const u = await usage(t);
    expect(u.cus_used).to.equal(0.3);
    expect(u.breakdown.list).to.equal(0.3);
    // This server charged lists before (other tests): the scraped total is exact whatever it holds.
    const after = metricOf((await admin(server, 'GET', '/gate/metrics')).text, 'list');
    expect(after, 'a list series').to.be.a('string');
    expect(after).to.match(/^\d+(\.\d{1,3})?$/);
    expect(Math.round(Number(after) * 1000) - Math.round(Number(before) * 1000)).to.equal(300);
    const lines = await waitForLogRecords(server, (l) => l.msg === 'request' && l.tenant_id === t.tenant_id, 3);
    expect(lines.length).to.equal(3);
    for (const l of lines) expect(l.cu).to.equal(0.1);
  });

  it('usage survives a restart, and the quota still counts it', async () => {
    const t = await createTenant(server, { monthly_quota: 3 });
    for (let i = 0; i < 3; i++) {
      expect((await call(t, 'POST', '/v1/put', { key: `r${i}`, data_b64: b64('x') })).status).to.equal(200);
    }
    expect((await call(t, 'GET', '/v1/list/default')).status).to.equal(402);
    // a hard kill right after the responses: nothing charged may be lost
    await server.stop('SIGKILL');
    server = await startServer({ dataDir: server.dataDir, env });
    const u = await usage(t);
    expect(u.cus_used).to.equal(3);
    expect(u.breakdown.put).to.equal(3);
    expect((await call(t, 'GET', '/v1/list/default')).status).to.equal(402);
    const all = await admin(server, 'GET', '/gate/admin/usage');
    const row = all.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === t.tenant_id);
    expect(row).to.include({ cus_used: 3, monthly_quota: 3, utilization: 1 });
  });
});
