// POST /v1/query/similarity: scores from the stored representation agree with the metric on the
// reconstructed dense arrays, for compressed entries, entries stored as they are, and any mix.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { startStorageServer, tenantClient, type Client } from '../storage/helpers.js';
import { METRICS, denseMetric, expectAgrees, expectProblem, noise, putArray, served, similarity, smooth } from './helpers.js';

describe('query: pairwise similarity', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  const SHAPE = [64, 64];
  const N = 64 * 64;
  // key -> how it is stored
  const ENTRIES: Array<[string, 'compressed' | 'passthrough']> = [
    ['smooth-f32', 'compressed'],
    ['smooth-f64', 'compressed'],
    ['smooth-big', 'compressed'],
    ['noise-f32', 'passthrough'],
    ['noise-i16', 'passthrough'],
    ['zeros', 'compressed'],
  ];
  const dense = new Map<string, Float64Array>();

  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server, ['default', 'elsewhere']);
    await putArray(c, 'smooth-f32', 'float32', SHAPE, smooth(SHAPE, 1), { expect: 'compressed' });
    await putArray(c, 'smooth-f64', 'float64', SHAPE, smooth(SHAPE, 2), { expect: 'compressed' });
    await putArray(
      c,
      'smooth-big',
      'float32',
      SHAPE,
      smooth(SHAPE, 1, 40).map((v, i) => v + 1e-3 * Math.sin(i)),
      { expect: 'compressed' },
    );
    await putArray(c, 'noise-f32', 'float32', SHAPE, noise(N, 3), { expect: 'passthrough' });
    await putArray(c, 'noise-i16', 'int16', SHAPE, noise(N, 4, 3000), { expect: 'passthrough' });
    await putArray(c, 'zeros', 'float32', SHAPE, new Array<number>(N).fill(0));
    await putArray(c, 'other-shape', 'float32', [32, 128], smooth([32, 128], 1), { expect: 'compressed' });
    await putArray(c, 'tiny', 'float32', [4, 4], smooth([4, 4], 5), { expect: 'passthrough' });
    await putArray(c, 'tiny-2', 'float64', [4, 4], smooth([4, 4], 6), { expect: 'passthrough' });
    for (const [key] of ENTRIES) dense.set(key, await served(c, key));
  });
  after(async () => {
    await server.destroy();
  });

  for (const metric of METRICS) {
    it(`${metric}: every pair of compressed and passthrough entries agrees with the dense arrays`, async () => {
      for (const [a, kindA] of ENTRIES) {
        for (const [b, kindB] of ENTRIES) {
          const r = await similarity(c, { key_a: a, key_b: b, metric });
          expect(r.status, r.text).to.equal(200);
          expect(r.body).to.deep.include({ key_a: a, key_b: b, namespace: 'default', metric });
          expect(r.body.score).to.be.a('number');
          expectAgrees(r.body.score, denseMetric(dense.get(a)!, dense.get(b)!, metric), `${metric}(${a} [${kindA}], ${b} [${kindB}])`);
        }
      }
    });
  }

  it('defaults to cosine, which is 1 for an entry against itself and 0 against zeros', async () => {
    const self = await similarity(c, { key_a: 'smooth-f32', key_b: 'smooth-f32' });
    expect(self.body.metric).to.equal('cosine');
    expect(self.body.score).to.be.closeTo(1, 1e-12);
    expect(self.body.score).to.be.at.most(1);
    const zero = await similarity(c, { key_a: 'zeros', key_b: 'smooth-f64' });
    expect(zero.body.score).to.equal(0);
    const dist = await similarity(c, { key_a: 'smooth-big', key_b: 'smooth-big', metric: 'euclidean' });
    expect(dist.body.score).to.be.at.least(0).and.at.most(1e-9);
  });

  it('small arrays stored as they are compare through their stored values', async () => {
    const x = await served(c, 'tiny');
    const y = await served(c, 'tiny-2');
    for (const metric of METRICS) {
      const r = await similarity(c, { key_a: 'tiny', key_b: 'tiny-2', metric });
      expect(r.status, r.text).to.equal(200);
      expectAgrees(r.body.score, denseMetric(x, y, metric), metric);
    }
  });

  it('entries of different shapes are 400 shape_mismatch; an unknown or deleted key is 404', async () => {
    expectProblem(await similarity(c, { key_a: 'smooth-f32', key_b: 'other-shape' }), 400, 'shape_mismatch');
    expectProblem(await similarity(c, { key_a: 'tiny', key_b: 'smooth-f32', metric: 'dot' }), 400, 'shape_mismatch');
    expectProblem(await similarity(c, { key_a: 'smooth-f32', key_b: 'nope' }), 404, 'not_found');
    expectProblem(await similarity(c, { key_a: 'nope', key_b: 'smooth-f32' }), 404, 'not_found');
    await putArray(c, 'doomed', 'float32', SHAPE, smooth(SHAPE, 9));
    expect((await similarity(c, { key_a: 'doomed', key_b: 'smooth-f32' })).status).to.equal(200);
    expect((await c.call('DELETE', '/v1/delete/default/doomed')).status).to.equal(200);
    expectProblem(await similarity(c, { key_a: 'doomed', key_b: 'smooth-f32' }), 404, 'not_found');
    expectProblem(await similarity(c, { key_a: 'smooth-f32', key_b: 'smooth-f64', namespace: 'elsewhere' }), 404, 'not_found');
  });

  it('bad bodies are 400 invalid_request', async () => {
    for (const body of [
      { key_b: 'smooth-f32' },
      { key_a: 'smooth-f32' },
      { key_a: 'smooth-f32', key_b: 'smooth-f64', metric: 'manhattan' },
      { key_a: 'smooth-f32', key_b: 'smooth-f64', metric: 3 },
      { key_a: 'smooth-f32', key_b: 'smooth-f64', metrics: 'dot' },
      { key_a: '', key_b: 'smooth-f64' },
      { key_a: 'smooth-f32', key_b: 'smooth-f64', namespace: 'bad/ns' },
    ]) {
      expectProblem(await similarity(c, body), 400, 'invalid_request');
    }
    const notJson = await c.call('POST', '/v1/query/similarity', { body: 'key_a=x', headers: { 'content-type': 'text/plain' } });
    expectProblem(notJson, 415, 'unsupported_media_type');
  });

  it('an entry holding NaN has no scores: 400', async () => {
    const values = smooth(SHAPE, 3);
    values[17] = NaN;
    await putArray(c, 'has-nan', 'float32', SHAPE, values, { expect: 'passthrough' });
    const r = await similarity(c, { key_a: 'has-nan', key_b: 'smooth-f32' });
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.detail).to.match(/not finite/);
  });
});
