// CONTRACT.md section 1 for the query routes: two tenants that both hold `default` never see each
// other's entries through similarity, top-K (by key or by vector) or search.
import { expect } from 'chai';
import { encodeNpy } from '../../src/codec/npy.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

describe('query: tenant isolation', () => {
  let server: TestServer;
  let a: CreatedTenant;
  let b: CreatedTenant;
  const call = (t: CreatedTenant, path: string, json: unknown) => http(server.url, 'POST', path, { json, headers: tenantHeaders(t) });
  const b64 = (text: string) => Buffer.from(text).toString('base64');

  before(async () => {
    server = await startServer();
    a = await createTenant(server);
    b = await createTenant(server);
    for (const [t, key, text] of [
      [a, 'vec-a', 'abcdefghi'],
      [a, 'vec-a2', 'ihgfedcba'],
      [b, 'vec-b', 'abcdefghi'],
    ] as const) {
      const r = await call(t, '/v1/put', { key, data_b64: b64(text), metadata: { owner: t.tenant_id, probe: true } });
      expect(r.status, r.text).to.equal(200);
    }
  });
  after(async () => {
    await server.destroy();
  });

  it("similarity and top-K over the other tenant's key are 404", async () => {
    expect((await call(b, '/v1/query/similarity', { key_a: 'vec-b', key_b: 'vec-a' })).status).to.equal(404);
    expect((await call(b, '/v1/query/similarity', { key_a: 'vec-a', key_b: 'vec-a2' })).status).to.equal(404);
    expect((await call(b, '/v1/query/topk', { query_key: 'vec-a' })).status).to.equal(404);
  });

  it("top-K candidates and search results are the tenant's own entries only", async () => {
    const topA = await call(a, '/v1/query/topk', { query_key: 'vec-a' });
    expect(topA.status, topA.text).to.equal(200);
    expect(topA.body.n_candidates).to.equal(1);
    expect(topA.body.results.map((p: [string, number]) => p[0])).to.deep.equal(['vec-a2']);
    // a vector is an .npy: the same nine bytes as a uint8 array compare with the blobs of that length
    const vector = encodeNpy('uint8', [9], Buffer.from('abcdefghi')).toString('base64');
    const vecB = await call(b, '/v1/query/topk_vector', { data_b64: vector, metric: 'euclidean' });
    expect(vecB.status, vecB.text).to.equal(200);
    expect(vecB.body.n_candidates).to.equal(1);
    expect(vecB.body.results[0][0]).to.equal('vec-b');
    const searchA = await call(a, '/v1/query/search', { filters: { probe: true } });
    expect(searchA.body.results.map((r: { key: string }) => r.key)).to.deep.equal(['vec-a', 'vec-a2']);
    const searchB = await call(b, '/v1/query/search', { filters: { owner: a.tenant_id } });
    expect(searchB.body).to.deep.include({ count: 0, results: [] });
  });
});
