// CONTRACT.md section 4, the gate rows: who gets in where, against a real server process.
import { expect } from 'chai';
import { http, skipAgainstExternal, startServer, type Reply, type TestServer } from '../helpers/server.js';
import { admin, adminHeaders, createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

const LIST = '/v1/list/default';

function expectProblem(r: Reply, status: number, code: string): void {
  expect(r.status, r.text).to.equal(status);
  expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(r.body).to.include({ status, code, type: `/problems/${code}` });
}

function expectNoRateHeaders(r: Reply): void {
  expect(r.headers.get('x-ratelimit-limit')).to.equal(null);
  expect(r.headers.get('x-ratelimit-remaining')).to.equal(null);
  expect(r.headers.get('x-ratelimit-reset')).to.equal(null);
}

describe('gate: authentication and authorization (CONTRACT.md section 4)', () => {
  let server: TestServer;
  let alice: CreatedTenant;
  const get = (path: string, headers: Record<string, string> = {}) => http(server.url, 'GET', path, { headers });

  before(async () => {
    server = await startServer();
    alice = await createTenant(server, { namespaces: ['default', 'shared'] });
  });
  after(async () => {
    await server.destroy();
  });

  describe('tenant endpoints', () => {
    it('a request without a key is 401 missing_api_key with a Bearer challenge', async () => {
      const r = await get(LIST);
      expectProblem(r, 401, 'missing_api_key');
      expect(r.headers.get('www-authenticate')).to.equal('Bearer realm="ttstore"');
      expectNoRateHeaders(r);
    });

    it('an empty X-Api-Key or a non-Bearer Authorization counts as no key', async () => {
      expectProblem(await get(LIST, { 'X-Api-Key': '' }), 401, 'missing_api_key');
      expectProblem(await get(LIST, { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), 401, 'missing_api_key');
    });

    it('an unknown key, well-formed or not, is 401 invalid_api_key', async () => {
      const unknown = `tts_${'A'.repeat(43)}`;
      const r = await get(LIST, { 'X-Api-Key': unknown });
      expectProblem(r, 401, 'invalid_api_key');
      expect(r.headers.get('www-authenticate')).to.match(/^Bearer realm="ttstore"/);
      expectNoRateHeaders(r);
      expectProblem(await get(LIST, { Authorization: 'Bearer not-a-key' }), 401, 'invalid_api_key');
    });

    it('the service key on a /v1 endpoint is 401 invalid_api_key', async () => {
      expectProblem(await get(LIST, adminHeaders(server)), 401, 'invalid_api_key');
      expectProblem(await get(LIST, { 'X-Api-Key': server.serviceKey }), 401, 'invalid_api_key');
    });

    it('a valid key is accepted as X-Api-Key and as Authorization: Bearer', async () => {
      expect((await get(LIST, tenantHeaders(alice))).status).to.equal(200);
      expect((await get(LIST, { Authorization: `Bearer ${alice.api_key}` })).status).to.equal(200);
      expect((await get(LIST, { Authorization: `bearer ${alice.api_key}` })).status).to.equal(200);
    });

    it('X-Api-Key wins when both headers are present', async () => {
      const bad = `tts_${'B'.repeat(43)}`;
      expect((await get(LIST, { 'X-Api-Key': alice.api_key, Authorization: `Bearer ${bad}` })).status).to.equal(200);
      expectProblem(await get(LIST, { 'X-Api-Key': bad, Authorization: `Bearer ${alice.api_key}` }), 401, 'invalid_api_key');
    });

    it('a rotated-out key is invalid at once; the new key works', async () => {
      skipAgainstExternal('the other nodes learn of a rotation within a second, not at once');
      const t = await createTenant(server);
      expect((await get(LIST, tenantHeaders(t))).status).to.equal(200);
      const rot = await admin(server, 'POST', '/gate/onboard/rotate-key', { tenant_id: t.tenant_id });
      expect(rot.status).to.equal(200);
      expect(rot.body.tenant_id).to.equal(t.tenant_id);
      expect(rot.body.api_key)
        .to.match(/^tts_[A-Za-z0-9_-]{43}$/)
        .and.not.equal(t.api_key);
      expect(rot.body.rotated_at).to.be.a('number');
      expectProblem(await get(LIST, tenantHeaders(t)), 401, 'invalid_api_key');
      expect((await get(LIST, { 'X-Api-Key': rot.body.api_key })).status).to.equal(200);
    });

    it("a deactivated tenant's key is invalid at once", async () => {
      const t = await createTenant(server);
      expect((await get(LIST, tenantHeaders(t))).status).to.equal(200);
      expect((await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: t.tenant_id })).status).to.equal(200);
      expectProblem(await get(LIST, tenantHeaders(t)), 401, 'invalid_api_key');
    });

    it('a namespace outside the ACL is 403 namespace_forbidden, and allowed after add-namespace', async () => {
      const r = await get('/v1/list/private', tenantHeaders(alice));
      expectProblem(r, 403, 'namespace_forbidden');
      const add = await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: alice.tenant_id, namespace: 'private' });
      expect(add.status).to.equal(200);
      expect(add.body).to.deep.equal({ tenant_id: alice.tenant_id, namespaces: ['default', 'shared', 'private'] });
      expect((await get('/v1/list/private', tenantHeaders(alice))).status).to.equal(200);
    });

    it('the ACL is checked before any work: a forbidden put stores nothing', async () => {
      const t = await createTenant(server);
      const put = await http(server.url, 'POST', '/v1/put', {
        headers: tenantHeaders(t),
        json: { key: 'k', namespace: 'elsewhere', data_b64: Buffer.from('x').toString('base64') },
      });
      expectProblem(put, 403, 'namespace_forbidden');
      await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: t.tenant_id, namespace: 'elsewhere' });
      expectProblem(await get('/v1/get/elsewhere/k', tenantHeaders(t)), 404, 'not_found');
    });

    it('rate-limit headers come with every response to a valid key, errors included', async () => {
      const h = tenantHeaders(alice);
      for (const r of [
        await get(LIST, h), // 200
        await get('/v1/list/nowhere', h), // 403
        await get('/v1/get/default/missing', h), // 404
        await get('/v1/list/default?limit=0', h), // 400
      ]) {
        expect(r.status).to.be.oneOf([200, 400, 403, 404]);
        expect(r.headers.get('x-ratelimit-limit'), `${r.status}`).to.match(/^\d+$/);
        expect(r.headers.get('x-ratelimit-remaining')).to.match(/^\d+$/);
        expect(r.headers.get('x-ratelimit-reset')).to.match(/^\d+$/);
      }
    });

    it('an unknown route is 404 before authentication, with no rate-limit headers', async () => {
      const r = await get('/v1/nope', tenantHeaders(alice));
      expectProblem(r, 404, 'not_found');
      expectNoRateHeaders(r);
    });
  });

  describe('admin endpoints', () => {
    it('no key is 401 missing_api_key', async () => {
      const r = await get('/gate/admin/tenants');
      expectProblem(r, 401, 'missing_api_key');
      expect(r.headers.get('www-authenticate')).to.equal('Bearer realm="ttstore"');
    });

    it('a wrong service key is 401 invalid_api_key', async () => {
      expectProblem(await get('/gate/admin/tenants', { Authorization: 'Bearer wrong-service-key-0123456789' }), 401, 'invalid_api_key');
    });

    it('the service key is accepted only as Authorization: Bearer', async () => {
      expectProblem(await get('/gate/admin/tenants', { 'X-Api-Key': server.serviceKey }), 401, 'invalid_api_key');
      expect((await get('/gate/admin/tenants', adminHeaders(server))).status).to.equal(200);
    });

    it('a tenant key in either header is 403 admin_only', async () => {
      expectProblem(await get('/gate/admin/tenants', tenantHeaders(alice)), 403, 'admin_only');
      expectProblem(await get('/gate/admin/tenants', { Authorization: `Bearer ${alice.api_key}` }), 403, 'admin_only');
      const create = await http(server.url, 'POST', '/gate/onboard/create', {
        headers: tenantHeaders(alice),
        json: { tenant_id: 'sneaky' },
      });
      expectProblem(create, 403, 'admin_only');
    });

    it('the service key as Bearer admits the request whatever X-Api-Key holds', async () => {
      const r = await get('/gate/admin/tenants', { ...adminHeaders(server), 'X-Api-Key': alice.api_key });
      expect(r.status).to.equal(200);
      const r2 = await get('/gate/admin/tenants', { ...adminHeaders(server), 'X-Api-Key': 'garbage' });
      expect(r2.status).to.equal(200);
    });

    it('admin and health responses carry no rate-limit headers and are not counted', async () => {
      const t = await createTenant(server, { rate_limit: { requests: 2, window_s: 60 } });
      for (let i = 0; i < 5; i++) {
        const r = await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`);
        expect(r.status).to.equal(200);
        expectNoRateHeaders(r);
      }
      expectNoRateHeaders(await get('/gate/health'));
      const r = await get(LIST, tenantHeaders(t));
      expect(r.status).to.equal(200);
      expect(r.headers.get('x-ratelimit-remaining')).to.equal('1');
    });

    it('a route error comes before authentication on admin paths too', async () => {
      expectProblem(await http(server.url, 'DELETE', '/gate/admin/tenants'), 405, 'method_not_allowed');
    });
  });
});
