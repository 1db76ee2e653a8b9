// A tenant's own account with its key: GET /v1/usage is the operator's usage record of the caller and
// of no one else; GET /v1/namespaces lists the caller's ACL. Both free, authenticated and rate limited.
import { expect } from 'chai';
import { NAMESPACED_OPERATIONS } from '../../src/gate/operations.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { admin, adminHeaders, createTenant, tenantHeaders } from '../helpers/tenants.js';

describe('gate: a tenant reads its own usage and namespaces', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.destroy();
  });

  const get = (path: string, headers: Record<string, string> = {}) => http(server.url, 'GET', path, { headers });

  it("GET /v1/usage is the admin's record of the caller, never another tenant's, and costs nothing", async () => {
    const a = await createTenant(server);
    const b = await createTenant(server);
    await get('/v1/list/default', tenantHeaders(a));
    for (let i = 0; i < 3; i++) await get('/v1/list/default', tenantHeaders(b));

    const mine = await get('/v1/usage', tenantHeaders(a));
    expect(mine.status).to.equal(200);
    expect(mine.headers.get('x-ratelimit-limit')).to.equal('100000');
    expect(mine.body).to.deep.equal((await admin(server, 'GET', `/gate/admin/usage/${a.tenant_id}`)).body);
    expect(mine.body).to.include({ tenant_id: a.tenant_id, cus_used: 0.1, stored_bytes: 0 });
    expect(mine.body.breakdown.list).to.equal(0.1);
    // reading it again charged nothing
    expect((await get('/v1/usage', tenantHeaders(a))).body.cus_used).to.equal(0.1);
    expect((await get('/v1/usage', tenantHeaders(b))).body).to.include({ tenant_id: b.tenant_id, cus_used: 0.3 });

    const past = await get('/v1/usage?period=2001-01', tenantHeaders(a));
    expect(past.body).to.include({ tenant_id: a.tenant_id, period: '2001-01', cus_used: 0 });
  });

  it('a bad period is a 400 problem; no key or the service key is a 401', async () => {
    const a = await createTenant(server);
    for (const bad of ['2001-13', '2001-1', 'now']) {
      const r = await get(`/v1/usage?period=${bad}`, tenantHeaders(a));
      expect(r.status, bad).to.equal(400);
      expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(r.body).to.include({ status: 400, code: 'invalid_request' });
      expect(r.body.detail).to.match(/period/);
    }
    for (const path of ['/v1/usage', '/v1/namespaces']) {
      expect((await get(path)).body).to.include({ status: 401, code: 'missing_api_key' });
      expect((await get(path, adminHeaders(server))).status).to.equal(401);
    }
  });

  it('a tenant past its monthly quota still reads its usage', async () => {
    const a = await createTenant(server, { monthly_quota: 0.1 });
    expect((await get('/v1/list/default', tenantHeaders(a))).status).to.equal(200);
    expect((await get('/v1/list/default', tenantHeaders(a))).status).to.equal(402);
    const r = await get('/v1/usage', tenantHeaders(a));
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ cus_used: 0.1, monthly_quota: 0.1, utilization: 1 });
  });

  it("GET /v1/namespaces lists the caller's namespaces and what its key may do in each, not another's", async () => {
    const a = await createTenant(server, { namespaces: ['default', 'sims'] });
    await createTenant(server, { namespaces: ['other'] });
    const r = await get('/v1/namespaces', tenantHeaders(a));
    expect(r.status).to.equal(200);
    expect(r.body).to.deep.equal({
      tenant_id: a.tenant_id,
      namespaces: ['default', 'sims'].map((namespace) => ({ namespace, operations: [...NAMESPACED_OPERATIONS] })),
    });
    await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: a.tenant_id, namespace: 'more' });
    const after = await get('/v1/namespaces', tenantHeaders(a));
    expect(after.body.namespaces.map((n: { namespace: string }) => n.namespace)).to.deep.equal(['default', 'sims', 'more']);
    expect((await get('/v1/usage', tenantHeaders(a))).body.cus_used).to.equal(0);
  });

  it('both are rate limited like any request', async () => {
    const a = await createTenant(server, { rate_limit: { requests: 2, window_s: 60 } });
    expect((await get('/v1/namespaces', tenantHeaders(a))).status).to.equal(200);
    expect((await get('/v1/usage', tenantHeaders(a))).status).to.equal(200);
    const r = await get('/v1/usage', tenantHeaders(a));
    expect(r.status).to.equal(429);
    expect(r.body.code).to.equal('rate_limited');
  });
});
