// CONTRACT.md section 1: storage is scoped per tenant. Two tenants that both hold `default` never
// see each other's entries. (Query routes are not built yet; when they land, their tenant isolation
// belongs here too: similarity/topk/search over another tenant's keys.) Simulation jobs are per tenant
// as well: another tenant's job_id is 404 and never listed.
import { expect } from 'chai';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

describe('gate: tenant isolation', () => {
  let server: TestServer;
  let a: CreatedTenant;
  let b: CreatedTenant;
  const call = (t: CreatedTenant, method: string, path: string, json?: unknown) =>
    http(server.url, method, path, { json, headers: tenantHeaders(t) });

  before(async () => {
    server = await startServer();
    a = await createTenant(server);
    b = await createTenant(server);
    for (const [t, text] of [
      [a, 'belongs to A'],
      [b, 'B owns this'],
    ] as const) {
      const r = await call(t, 'POST', '/v1/put', {
        key: 'same',
        data_b64: Buffer.from(text).toString('base64'),
        metadata: { owner: t.tenant_id },
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.version).to.equal(1); // numbering is per tenant too
    }
    expect((await call(a, 'POST', '/v1/put', { key: 'only-a', data_b64: Buffer.from('a only').toString('base64') })).status).to.equal(200);
  });
  after(async () => {
    await server.destroy();
  });

  it('each tenant reads back only its own data under the same namespace and key', async () => {
    for (const [t, text] of [
      [a, 'belongs to A'],
      [b, 'B owns this'],
    ] as const) {
      const got = await call(t, 'GET', '/v1/get/default/same');
      expect(got.status).to.equal(200);
      expect(got.body.metadata).to.deep.equal({ owner: t.tenant_id });
      const served = await call(t, 'POST', '/v1/serve', { key: 'same' });
      expect(served.status).to.equal(200);
      expect(Buffer.from(served.body.data_b64, 'base64').toString()).to.equal(text);
    }
  });

  it("one tenant cannot list, get, serve or delete the other's entries", async () => {
    const listB = await call(b, 'GET', '/v1/list/default');
    expect(listB.body.keys.map((k: { key: string }) => k.key)).to.deep.equal(['same']);
    expect((await call(b, 'GET', '/v1/get/default/only-a')).status).to.equal(404);
    expect((await call(b, 'POST', '/v1/serve', { key: 'only-a' })).status).to.equal(404);
    expect((await call(b, 'DELETE', '/v1/delete/default/only-a')).status).to.equal(404);
    // A's entry is untouched
    expect((await call(a, 'GET', '/v1/get/default/only-a')).status).to.equal(200);
    // B deleting its own 'same' leaves A's
    expect((await call(b, 'DELETE', '/v1/delete/default/same')).status).to.equal(200);
    expect((await call(b, 'GET', '/v1/get/default/same')).status).to.equal(404);
    const stillA = await call(a, 'GET', '/v1/get/default/same');
    expect(stillA.status).to.equal(200);
    expect(stillA.body.metadata).to.deep.equal({ owner: a.tenant_id });
  });

  it("one tenant cannot read the other's simulation jobs: status is 404 and list leaves them out", async () => {
    const sub = await call(a, 'POST', '/v1/simulation/submit', { solver: 'poisson_2d', params: { n_bits: 9 } });
    expect(sub.status, sub.text).to.equal(202);
    const jobId = sub.body.job_id as string;
    expect((await call(a, 'GET', `/v1/simulation/status/${jobId}`)).status).to.equal(200);
    const foreign = await call(b, 'GET', `/v1/simulation/status/${jobId}`);
    expect(foreign.status).to.equal(404);
    expect(foreign.body.code).to.equal('not_found');
    const ids = (r: { body: { jobs: Array<{ job_id: string }> } }) => r.body.jobs.map((j) => j.job_id);
    expect(ids(await call(b, 'GET', '/v1/simulation/list'))).to.not.include(jobId);
    expect(ids(await call(b, 'GET', '/v1/simulation/list?namespace=default'))).to.not.include(jobId);
    expect(ids(await call(a, 'GET', '/v1/simulation/list'))).to.include(jobId);
  });
});
