// POST /v1/query/topk_vector: the vector is decomposed on arrival and compared core against core.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { b64, startStorageServer, tenantClient, type Client } from '../storage/helpers.js';
import { METRICS, denseMetric, expectAgrees, expectProblem, noise, npyB64, putArray, served, smooth, topkVector } from './helpers.js';

const SHAPE = [16, 16, 16];
const N = 16 * 16 * 16;

describe('query: top-K by vector', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  const keys = ['v-0', 'v-1', 'v-2', 'v-3', 'v-noise'];

  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server);
    for (let j = 0; j < 4; j++) await putArray(c, keys[j]!, 'float64', SHAPE, smooth(SHAPE, j), { metadata: { j }, expect: 'compressed' });
    await putArray(c, 'v-noise', 'float32', SHAPE, noise(N, 9), { metadata: { j: 'noise' }, expect: 'passthrough' });
    await putArray(c, 'other', 'float64', [N], smooth([N], 1));
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  for (const metric of METRICS) {
    it(`${metric}: every stored entry of the vector's shape, in order, agreeing with the dense arrays`, async () => {
      const vector = smooth(SHAPE, 2).map((v, i) => v + 0.05 * Math.cos(i / 50));
      const r = await topkVector(c, { data_b64: npyB64('float64', SHAPE, vector), metric, k: 50 });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.query_key).to.equal('');
      expect(r.body.metric).to.equal(metric);
      expect(r.body.n_candidates).to.equal(keys.length);
      const got = r.body.results as Array<[string, number]>;
      expect(got.map((p) => p[0]).sort()).to.deep.equal([...keys].sort());
      expect(got[0]![0]).to.equal('v-2');
      for (let i = 1; i < got.length; i++) {
        if (metric === 'euclidean') expect(got[i]![1]).to.be.at.least(got[i - 1]![1]);
        else expect(got[i]![1]).to.be.at.most(got[i - 1]![1]);
      }
      // The vector is decomposed at the default tolerance (1e-6), so it agrees with its dense self.
      for (const [key, score] of got) expectAgrees(score, denseMetric(vector, await served(c, key), metric), `${metric} ${key}`);
    });
  }

  it('filters narrow the candidates; another shape has none', async () => {
    const vector = npyB64('float64', SHAPE, smooth(SHAPE, 0));
    const r = await topkVector(c, { data_b64: vector, filters: { j: 3 } });
    expect(r.body.n_candidates).to.equal(1);
    expect(r.body.results.map((p: [string, number]) => p[0])).to.deep.equal(['v-3']);
    const flat = await topkVector(c, { data_b64: npyB64('float64', [N], smooth([N], 1)), k: 5 });
    expect(flat.body.n_candidates).to.equal(1);
    expect(flat.body.results[0][0]).to.equal('other');
    expect(flat.body.results[0][1]).to.be.closeTo(1, 1e-6);
    const none = await topkVector(c, { data_b64: npyB64('float32', [7], [1, 2, 3, 4, 5, 6, 7]) });
    expect(none.body).to.deep.include({ n_candidates: 0, results: [] });
  });

  it('takes domain or tolerance for the decomposition; a loose tolerance moves scores by about that much', async () => {
    const vector = smooth(SHAPE, 1).map((v, i) => v + 1e-3 * Math.sin(i * 1.7));
    const tight = await topkVector(c, { data_b64: npyB64('float64', SHAPE, vector), k: 1, metric: 'cosine' });
    const loose = await topkVector(c, { data_b64: npyB64('float64', SHAPE, vector), k: 1, metric: 'cosine', domain: 'embedding' });
    const tol = await topkVector(c, { data_b64: npyB64('float64', SHAPE, vector), k: 1, metric: 'cosine', tolerance: 1e-2 });
    for (const r of [tight, loose, tol]) {
      expect(r.status, r.text).to.equal(200);
      expect(r.body.results[0][0]).to.equal('v-1');
    }
    expect(Math.abs(loose.body.results[0][1] - tight.body.results[0][1])).to.be.at.most(2e-3);
    expect(Math.abs(tol.body.results[0][1] - tight.body.results[0][1])).to.be.at.most(2e-2);
  });

  it('bad vectors and bodies are 400 (NaN, not base64, no data_b64, bad domain, max_rank); an oversized one 413', async () => {
    const nan = smooth(SHAPE, 1);
    nan[5] = NaN;
    for (const body of [
      { data_b64: npyB64('float64', SHAPE, nan) },
      { data_b64: '***' },
      {},
      { data_b64: npyB64('float64', SHAPE, smooth(SHAPE, 1)), domain: 'poetry' },
      { data_b64: npyB64('float64', SHAPE, smooth(SHAPE, 1)), tolerance: 1.5 },
      { data_b64: npyB64('float64', SHAPE, smooth(SHAPE, 1)), max_rank: 4 },
      { data_b64: npyB64('float64', SHAPE, smooth(SHAPE, 1)), k: 0 },
    ]) {
      expectProblem(await topkVector(c, body), 400, 'invalid_request');
    }
  });

  it('a data_b64 that is not an .npy (raw float32 bytes, a blob) is 400, never 200 with no candidates', async () => {
    const floats = Buffer.from(new Float32Array(smooth(SHAPE, 1)).buffer);
    const bytes = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7) % 251));
    const put = await c.put({ key: 'blob', data_b64: b64(bytes) });
    expect(put.status, put.text).to.equal(200);
    for (const raw of [floats, bytes]) {
      const r = await topkVector(c, { data_b64: b64(raw), metric: 'euclidean' });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.field).to.equal('data_b64');
      expect(r.body.detail).to.match(/\.npy/);
    }
  });
});

describe('query: top-K by vector, payload limit', function () {
  this.timeout(60000);
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startStorageServer({ env: { SVC_GATE_MAX_PAYLOAD_BYTES: '65536' } });
    c = await tenantClient(server);
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  it('a vector over SVC_GATE_MAX_PAYLOAD_BYTES is 413', async () => {
    const r = await topkVector(c, { data_b64: npyB64('float64', [16384], new Array<number>(16384).fill(1)) });
    expectProblem(r, 413, 'payload_too_large');
  });
});
