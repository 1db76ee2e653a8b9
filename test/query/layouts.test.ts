// Entries of one shape are comparable whatever their layouts (CONTRACT.md section 3): over a namespace
// holding row_major and interleaved entries of one shape (the engine's own choices, trains put in
// either layout, and an entry stored as it is), similarity, top-K by key and top-K by vector agree
// with the metric on the arrays serve returns, order included.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { b64, npyOf, rng, startStorageServer, tenantClient, type Client } from '../storage/helpers.js';
import { METRICS, denseMetric, expectAgrees, noise, npyB64, putArray, served, similarity, smooth, topk, topkVector } from './helpers.js';

const SHAPE = [64, 64];
const N = 64 * 64;

/** A front along the diagonal (interleaved's field), offset by `shift`. */
function front(shift: number): number[] {
  return Array.from({ length: N }, (_, t) => Math.tanh((Math.floor(t / 64) - (t % 64) + shift) / 1.5));
}

/** A separable smooth field (row_major's: rank 1 along the axes). */
function separable(seed: number): number[] {
  return Array.from({ length: N }, (_, t) => Math.sin(3 * (Math.floor(t / 64) / 64) + seed) * Math.cos(2 * ((t % 64) / 64) - seed));
}

/** A random train of rank 3 over 12 modes of size 2 (64 x 64 in either layout), perturbing `seed`'s smooth field a little. */
function cores(seed: number): Array<{ data_b64: string }> {
  const r = rng(seed);
  const ranks = [1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1];
  return ranks.slice(0, -1).map((rk, k) => {
    const next = ranks[k + 1]!;
    const data = Float64Array.from({ length: rk * 2 * next }, () => 0.4 + 0.6 * r());
    return { data_b64: b64(npyOf('float64', [rk, 2, next], data)) };
  });
}

describe('query: entries of one shape in different layouts', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  const keys: string[] = [];
  const layouts = new Map<string, string>();
  const dense = new Map<string, Float64Array>();

  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server);
    const add = (key: string, body: Record<string, any>) => {
      keys.push(key);
      layouts.set(key, body.layout as string);
    };
    for (let j = 0; j < 3; j++)
      add(`smooth-${j}`, await putArray(c, `smooth-${j}`, 'float32', SHAPE, smooth(SHAPE, j), { expect: 'compressed' }));
    for (let j = 0; j < 2; j++)
      add(`separable-${j}`, await putArray(c, `separable-${j}`, 'float32', SHAPE, separable(j), { expect: 'compressed' }));
    for (const [j, shift] of [-4, 1, 3].entries()) {
      add(`front-${j}`, await putArray(c, `front-${j}`, 'float64', SHAPE, front(shift), { expect: 'compressed' }));
    }
    add('noise', await putArray(c, 'noise', 'float32', SHAPE, noise(N, 7), { expect: 'passthrough' }));
    for (const layout of ['row_major', 'interleaved']) {
      for (let j = 0; j < 2; j++) {
        const key = `cores-${layout}-${j}`;
        const r = await c.call('POST', '/v1/put_cores', {
          json: { key, cores: cores(10 * j + layout.length), shape: SHAPE, dtype: 'float64', layout },
        });
        expect(r.status, r.text).to.equal(200);
        add(key, r.body);
      }
    }
    for (const key of keys) dense.set(key, await served(c, key));
  });
  after(async () => {
    await server.destroy();
  });

  it('put chooses the layout per entry: the namespace holds both for one shape', () => {
    expect(layouts.get('separable-0')).to.equal('row_major');
    expect(layouts.get('front-0')).to.equal('interleaved');
    expect(new Set(layouts.values())).to.have.keys('row_major', 'interleaved');
  });

  for (const metric of METRICS) {
    it(`${metric}: similarity of every pair agrees with the dense arrays, whatever the two layouts`, async () => {
      // Every unordered pair (the metrics are symmetric); an uncompressed entry comes on either side.
      for (const [i, a] of keys.entries()) {
        for (const b of keys.slice(i)) {
          const r = await similarity(c, { key_a: a, key_b: b, metric });
          expect(r.status, r.text).to.equal(200);
          expectAgrees(
            r.body.score,
            denseMetric(dense.get(a)!, dense.get(b)!, metric),
            `${metric}(${a} [${layouts.get(a)}], ${b} [${layouts.get(b)}])`,
          );
        }
      }
    });

    it(`${metric}: top-K by key ranks every entry of the shape, across layouts, in the dense order`, async () => {
      for (const q of ['separable-1', 'smooth-1', 'front-1', 'noise', 'cores-interleaved-0']) {
        const r = await topk(c, { query_key: q, metric, k: 50 });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.n_candidates).to.equal(keys.length - 1);
        expectDenseOrder(r.body.results, dense.get(q)!, metric, `${metric} top-K of ${q}`);
      }
    });

    it(`${metric}: top-K by vector ranks every entry of the shape, across layouts, in the dense order`, async () => {
      for (const vector of [smooth(SHAPE, 1).map((v, i) => v + 0.05 * Math.cos(i / 50)), front(1)]) {
        // Decomposed this tightly the vector is its dense self, so its scores are the dense ones.
        const r = await topkVector(c, { data_b64: npyB64('float64', SHAPE, vector), metric, k: 50, tolerance: 1e-9 });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.n_candidates).to.equal(keys.length);
        expectDenseOrder(r.body.results, Float64Array.from(vector), metric, `${metric} top-K by vector`);
      }
    });
  }

  /** Every score agrees with the dense metric, and the keys come in the dense order (ties by key). */
  function expectDenseOrder(results: Array<[string, number]>, query: Float64Array, metric: string, what: string): void {
    for (const [key, score] of results) expectAgrees(score, denseMetric(query, dense.get(key)!, metric as 'dot'), `${what}: ${key}`);
    const want = results
      .map(([key]) => [key, denseMetric(query, dense.get(key)!, metric as 'dot')] as [string, number])
      .sort((x, y) => (metric === 'euclidean' ? x[1] - y[1] : y[1] - x[1]) || (x[0] < y[0] ? -1 : 1));
    expect(
      results.map((p) => p[0]),
      what,
    ).to.deep.equal(want.map((p) => p[0]));
  }
});
