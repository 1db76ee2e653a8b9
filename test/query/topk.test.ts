// POST /v1/query/topk: candidates, order, ties, k, filters, and scores that agree with the dense arrays.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { startStorageServer, tenantClient, type Client } from '../storage/helpers.js';
import { METRICS, denseMetric, expectAgrees, expectProblem, noise, putArray, served, smooth, topk, type Metric } from './helpers.js';

const SHAPE = [32, 64];
const N = 32 * 64;

/** Whether `a` may come before `b` in a top-K of `metric` (ties by key ascending). */
function inOrder(a: [string, number], b: [string, number], metric: Metric): boolean {
  if (a[1] === b[1]) return Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])) < 0;
  return metric === 'euclidean' ? a[1] < b[1] : a[1] > b[1];
}

describe('query: top-K by stored key', function () {
  this.timeout(180000);
  let server: TestServer;
  let c: Client;
  const keys: string[] = [];

  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server, ['default', 'ties', 'fresh']);
    for (let j = 0; j < 12; j++) {
      const key = `field-${String(j).padStart(2, '0')}`;
      keys.push(key);
      await putArray(c, key, 'float32', SHAPE, smooth(SHAPE, j % 7, 1 + j / 4), {
        metadata: { group: j % 3 === 0 ? 'a' : 'b', parity: j % 2, tag: j < 6 ? 'low' : 'high' },
        expect: 'compressed',
      });
    }
    for (let j = 0; j < 3; j++) {
      const key = `noise-${j}`;
      keys.push(key);
      await putArray(c, key, 'float32', SHAPE, noise(N, 50 + j), { metadata: { group: 'n' }, expect: 'passthrough' });
    }
    // Same number of elements, other shapes: never candidates.
    await putArray(c, 'transposed', 'float32', [64, 32], smooth([64, 32], 1));
    await putArray(c, 'flat', 'float32', [N], smooth([N], 1));
    await putArray(c, 'small', 'float32', [4, 4], smooth([4, 4], 1));
  });
  after(async () => {
    await server.destroy();
  });

  for (const metric of METRICS) {
    it(`${metric}: all comparable entries but the query, in order, with scores that agree with the dense arrays`, async () => {
      const r = await topk(c, { query_key: 'field-03', k: 100, metric });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.query_key).to.equal('field-03');
      expect(r.body.metric).to.equal(metric);
      expect(r.body.n_candidates).to.equal(keys.length - 1);
      const got = r.body.results as Array<[string, number]>;
      expect(got.map((p) => p[0]).sort()).to.deep.equal(keys.filter((k) => k !== 'field-03').sort());
      for (let i = 1; i < got.length; i++) expect(inOrder(got[i - 1]!, got[i]!, metric), JSON.stringify(got)).to.equal(true);
      const q = await served(c, 'field-03');
      for (const [key, score] of got) expectAgrees(score, denseMetric(q, await served(c, key), metric), `${metric} ${key}`);
    });
  }

  it('k defaults to 10 and cuts the ranking; k = 1 is the best one; k above the candidates gives them all', async () => {
    const all = (await topk(c, { query_key: 'field-00', k: 1000 })).body.results as Array<[string, number]>;
    expect(all).to.have.length(keys.length - 1);
    const ten = await topk(c, { query_key: 'field-00' });
    expect(ten.body.results).to.deep.equal(all.slice(0, 10));
    expect(ten.body.n_candidates).to.equal(keys.length - 1);
    const one = await topk(c, { query_key: 'field-00', k: 1 });
    expect(one.body.results).to.deep.equal(all.slice(0, 1));
  });

  it('ties are broken by key, ascending', async () => {
    // Bit-identical cores under several keys (put_cores of one entry's cores): equal scores.
    await putArray(c, 'tie-source', 'float32', SHAPE, smooth(SHAPE, 4), { namespace: 'ties', expect: 'compressed' });
    const src = await c.serve({ key: 'tie-source', namespace: 'ties', target: 'cores' });
    expect(src.status, src.text).to.equal(200);
    for (const key of ['tie-c', 'tie-a', 'tie-b', 'tie-\u00e9', 'tie-Z']) {
      const r = await c.call('POST', '/v1/put_cores', {
        json: { key, namespace: 'ties', cores: src.body.cores, shape: src.body.shape, dtype: src.body.dtype, layout: src.body.layout },
      });
      expect(r.status, r.text).to.equal(200);
    }
    await putArray(c, 'query', 'float32', SHAPE, smooth(SHAPE, 2), { namespace: 'ties' });
    for (const metric of METRICS) {
      const r = await topk(c, { query_key: 'query', namespace: 'ties', metric });
      expect(r.status, r.text).to.equal(200);
      const got = r.body.results as Array<[string, number]>;
      expect(got.map((p) => p[0])).to.deep.equal(['tie-Z', 'tie-a', 'tie-b', 'tie-c', 'tie-source', 'tie-\u00e9']);
      expect(new Set(got.map((p) => p[1])).size).to.equal(1);
    }
  });

  it('filters narrow the candidates (and n_candidates); values match as JSON, strictly', async () => {
    const a = await topk(c, { query_key: 'field-01', k: 100, filters: { group: 'a' } });
    expect(a.status, a.text).to.equal(200);
    expect(a.body.results.map((p: [string, number]) => p[0]).sort()).to.deep.equal(['field-00', 'field-03', 'field-06', 'field-09']);
    expect(a.body.n_candidates).to.equal(4);
    const both = await topk(c, { query_key: 'field-01', k: 100, filters: { group: 'b', tag: 'high' } });
    expect(both.body.results.map((p: [string, number]) => p[0]).sort()).to.deep.equal(['field-07', 'field-08', 'field-10', 'field-11']);
    const strict = await topk(c, { query_key: 'field-01', filters: { parity: '1' } });
    expect(strict.body).to.deep.include({ n_candidates: 0, results: [] });
    const missing = await topk(c, { query_key: 'field-01', filters: { nope: 1 } });
    expect(missing.body.n_candidates).to.equal(0);
    const none = await topk(c, { query_key: 'field-01', k: 100, filters: {} });
    expect(none.body.n_candidates).to.equal(keys.length - 1);
  });

  it('deleted entries are left out; a rewritten entry is compared in its latest version', async () => {
    for (const key of ['x-query', 'x-old', 'x-gone']) await putArray(c, key, 'float32', SHAPE, smooth(SHAPE, 1), { namespace: 'fresh' });
    const before = await topk(c, { query_key: 'x-query', namespace: 'fresh', metric: 'euclidean' });
    expect(before.body.results.map((p: [string, number]) => p[0]).sort()).to.deep.equal(['x-gone', 'x-old']);
    for (const [, d] of before.body.results) expect(d).to.be.at.most(1e-6);
    expect((await c.call('DELETE', '/v1/delete/fresh/x-gone')).status).to.equal(200);
    const values = smooth(SHAPE, 5);
    await putArray(c, 'x-old', 'float32', SHAPE, values, { namespace: 'fresh' });
    const after = await topk(c, { query_key: 'x-query', namespace: 'fresh', metric: 'euclidean' });
    expect(after.body.n_candidates).to.equal(1);
    expect(after.body.results[0][0]).to.equal('x-old');
    const want = denseMetric(await served(c, 'x-query', 'fresh'), await served(c, 'x-old', 'fresh'), 'euclidean');
    expect(want).to.be.above(1);
    expectAgrees(after.body.results[0][1], want, 'rewritten x-old');
  });

  it('a query with no comparable entry has no candidates', async () => {
    const r = await topk(c, { query_key: 'small' });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.deep.equal({ query_key: 'small', metric: 'cosine', n_candidates: 0, results: [] });
  });

  it('k = 0, k = 1001, a fractional k and bad filters are 400; an unknown query key is 404', async () => {
    for (const body of [
      { query_key: 'field-00', k: 0 },
      { query_key: 'field-00', k: 1001 },
      { query_key: 'field-00', k: 2.5 },
      { query_key: 'field-00', k: '10' },
      { query_key: 'field-00', filters: [] },
      { query_key: 'field-00', filters: 'group=a' },
      { query_key: 'field-00', metric: 'cos' },
      { k: 3 },
    ]) {
      expectProblem(await topk(c, body), 400, 'invalid_request');
    }
    expectProblem(await topk(c, { query_key: 'missing' }), 404, 'not_found');
  });
});
