// put_cores with mode sizes of the client's choosing (CONTRACT.md sections 3 and 8): with layout
// row_major any positive sizes whose product is the size of the shape are accepted and served, and
// whatever put_cores accepts, serve, get and every query accept too. References: the dense array the
// cores define, contracted here in float64 (row_major: the mode tensor is the C-order flattening).
import { expect } from 'chai';
import { decodeNpy } from '../../src/codec/npy.js';
import { denseMetric, expectAgrees, METRICS, npyB64, putArray, served, similarity, smooth, topk, topkVector } from '../query/helpers.js';
import { b64, expectClose, npyOf, rng, storageSuite, type Client } from './helpers.js';

interface Train {
  modes: number[];
  ranks: number[];
  cores: Float32Array[];
}

/** A train of float32 cores with values from a seeded generator. */
function randomTrain(modes: number[], ranks: number[], seed: number): Train {
  const r = rng(seed);
  const cores = modes.map((n, k) => Float32Array.from({ length: ranks[k]! * n * ranks[k + 1]! }, () => 2 * r() - 1));
  return { modes, ranks, cores };
}

/** Element t of the mode tensor (= C-order element t for row_major) as a product of core slices, in float64. */
function denseOf(t: Train): Float64Array {
  const N = t.modes.reduce((a, b) => a * b, 1);
  const out = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    let rest = i;
    const digits = new Array<number>(t.modes.length);
    for (let k = t.modes.length - 1; k >= 0; k--) {
      digits[k] = rest % t.modes[k]!;
      rest = Math.floor(rest / t.modes[k]!);
    }
    let v = [1];
    for (let k = 0; k < t.modes.length; k++) {
      const [r0, n, r1] = [t.ranks[k]!, t.modes[k]!, t.ranks[k + 1]!];
      const w = new Array<number>(r1).fill(0);
      for (let a = 0; a < r0; a++) {
        for (let b = 0; b < r1; b++) w[b] += v[a]! * t.cores[k]![(a * n + digits[k]!) * r1 + b]!;
      }
      v = w;
    }
    out[i] = v[0]!;
  }
  return out;
}

function coresBody(t: Train): Array<{ data_b64: string }> {
  return t.cores.map((c, k) => ({ data_b64: b64(npyOf('float32', [t.ranks[k]!, t.modes[k]!, t.ranks[k + 1]!], c)) }));
}

/** The odd splits of the contract's examples: [shape, modes, ranks]. */
const SPLITS: Array<[number[], number[], number[]]> = [
  [
    [2, 3, 4],
    [2, 3, 4],
    [1, 2, 3, 1],
  ],
  [
    [4, 4],
    [4, 4],
    [1, 3, 1],
  ],
  [[16], [4, 4], [1, 2, 1]],
  [[6], [2, 3], [1, 2, 1]],
  [[12], [3, 4], [1, 3, 1]],
];

const name = (shape: number[], modes: number[]) => `s${shape.join('x')}-m${modes.join('x')}`;

describe('storage: put_cores over any row_major mode split', function () {
  this.timeout(60000);
  const suite = storageSuite(['default', 'splits', 'batch']);
  let c: Client;
  const trains = new Map<string, { shape: number[]; train: Train; dense: Float64Array }>();

  before(async () => {
    c = suite.c;
    for (const [i, [shape, modes, ranks]] of SPLITS.entries()) {
      const train = randomTrain(modes, ranks, 100 + i);
      const key = name(shape, modes);
      trains.set(key, { shape, train, dense: denseOf(train) });
      const r = await c.call('POST', '/v1/put_cores', { json: { key, shape, dtype: 'float64', cores: coresBody(train) } });
      expect(r.status, `${key}: ${r.text}`).to.equal(200);
      expect(r.body).to.include({ verdict: 'exact', compressed: true, layout: 'row_major', n_cores: modes.length });
      expect(r.body.shape).to.deep.equal(shape);
      expect(r.body.ranks).to.deep.equal(ranks);
      expect(r.body.fingerprint).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
    }
  });

  it('serve dense rebuilds the array the cores define, in float64 and after the cast to float32', async () => {
    for (const [key, { shape, train, dense }] of trains) {
      const back = await c.dense(key);
      expect(back.shape, key).to.deep.equal(shape);
      expectClose(new Float64Array(back.data.buffer, back.data.byteOffset, back.data.length / 8), dense, 1e-14, key);
      const f32 = await c.call('POST', '/v1/put_cores', { json: { key: `${key}/f32`, shape, cores: coresBody(train) } });
      expect(f32.status, f32.text).to.equal(200);
      const v = await served(c, `${key}/f32`);
      expectClose(v, Float64Array.from(dense, Math.fround), 1e-7, `${key} float32`);
    }
  });

  it('serve target cores gives back exactly the cores that were put, and get reports their ranks', async () => {
    for (const [key, { shape, train }] of trains) {
      const r = await c.serve({ key, target: 'cores' });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.shape).to.deep.equal(shape);
      expect(r.body.ranks).to.deep.equal(train.ranks);
      for (const [k, core] of (r.body.cores as Array<{ shape: number[]; data_b64: string }>).entries()) {
        expect(core.shape).to.deep.equal([train.ranks[k], train.modes[k], train.ranks[k + 1]]);
        const a = await decodeNpy(Buffer.from(core.data_b64, 'base64'), 2 ** 40);
        expect(Buffer.from(a.data)).to.deep.equal(Buffer.from(train.cores[k]!.buffer));
      }
      const g = await c.call('GET', `/v1/get/default/${key}`);
      expect(g.status).to.equal(200);
      expect(g.body).to.include({ n_cores: train.modes.length, max_rank: Math.max(...train.ranks), verdict: 'exact' });
    }
  });

  it('similarity compares a split train with an uncompressed entry and with other splits of its shape', async () => {
    // The same 16 values as four trains of different splits and as a plain (passthrough) array.
    const base = randomTrain([16], [1, 1], 7);
    const values = Array.from(denseOf(base));
    await putArray(c, 'v16/plain', 'float64', [16], values, { namespace: 'splits', expect: 'passthrough' });
    const other = randomTrain([2, 8], [1, 2, 1], 8);
    const splits: Array<[string, Train]> = [
      ['v16/one', base],
      ['v16/2x8', other],
      ['v16/4x4', randomTrain([4, 4], [1, 3, 1], 9)],
      ['v16/2x2x2x2', randomTrain([2, 2, 2, 2], [1, 2, 2, 2, 1], 10)],
    ];
    for (const [key, t] of splits) {
      const r = await c.call('POST', '/v1/put_cores', { json: { key, namespace: 'splits', dtype: 'float64', cores: coresBody(t) } });
      expect(r.status, r.text).to.equal(200);
    }
    const dense = new Map<string, Float64Array>([
      ['v16/plain', Float64Array.from(values)],
      ...splits.map(([k, t]) => [k, denseOf(t)] as [string, Float64Array]),
    ]);
    const keys = [...dense.keys()];
    for (const a of keys) {
      for (const b of keys) {
        for (const metric of METRICS) {
          const r = await similarity(c, { namespace: 'splits', key_a: a, key_b: b, metric });
          expect(r.status, `${a} ${b}: ${r.text}`).to.equal(200);
          expectAgrees(r.body.score, denseMetric(dense.get(a)!, dense.get(b)!, metric), `${metric}(${a}, ${b})`);
        }
      }
    }
  });

  it('top-K by key and by vector rank split trains among the entries of their shape', async () => {
    // A 64 x 64 field the engine compresses, and natural trains of that shape with modes [64, 64].
    const shape = [64, 64];
    const field = smooth(shape, 3);
    const put = await putArray(c, 'grid/engine', 'float64', shape, field, { namespace: 'splits', expect: 'compressed' });
    expect(put.n_cores).to.equal(12);
    const dense = new Map<string, Float64Array>([['grid/engine', await served(c, 'grid/engine', 'splits')]]);
    for (const [i, [modes, ranks]] of (
      [
        [
          [64, 64],
          [1, 3, 1],
        ],
        [
          [8, 512],
          [1, 4, 1],
        ],
        [[4096], [1, 1]],
      ] as Array<[number[], number[]]>
    ).entries()) {
      const key = `grid/${modes.join('x')}`;
      const t = randomTrain(modes, ranks, 40 + i);
      const r = await c.call('POST', '/v1/put_cores', { json: { key, namespace: 'splits', shape, dtype: 'float64', cores: coresBody(t) } });
      expect(r.status, r.text).to.equal(200);
      dense.set(key, await served(c, key, 'splits'));
    }
    for (const metric of METRICS) {
      for (const q of dense.keys()) {
        const r = await topk(c, { namespace: 'splits', query_key: q, k: 10, metric });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.n_candidates, q).to.equal(dense.size - 1);
        for (const [key, score] of r.body.results as Array<[string, number]>) {
          expectAgrees(score, denseMetric(dense.get(q)!, dense.get(key)!, metric), `topk ${metric}(${q}, ${key})`);
        }
      }
      const v = smooth(shape, 5);
      const r = await topkVector(c, { namespace: 'splits', data_b64: npyB64('float64', shape, v), k: 10, metric });
      expect(r.status, r.text).to.equal(200);
      expect(r.body.n_candidates).to.equal(dense.size);
      for (const [key, score] of r.body.results as Array<[string, number]>) {
        expectAgrees(score, denseMetric(v, dense.get(key)!, metric), `topk_vector ${metric}(${key})`);
      }
    }
    // The odd splits of the small shapes are queried the same way, against the arrays they define.
    for (const [key, { shape: s, dense: want }] of trains) {
      const r = await topkVector(c, { namespace: 'default', data_b64: npyB64('float64', s, Array.from(want)), k: 50, metric: 'cosine' });
      expect(r.status, r.text).to.equal(200);
      const hit = (r.body.results as Array<[string, number]>).find(([k]) => k === key);
      expect(hit, key).to.not.equal(undefined);
      expectAgrees(hit![1], 1, `topk_vector of ${key} against itself`);
      const t = await topk(c, { namespace: 'default', query_key: key, k: 50, metric: 'dot' });
      expect(t.status, t.text).to.equal(200);
    }
  });

  it('put_cores_batch stores entries of odd splits all or nothing and serves them', async () => {
    const entries = SPLITS.map(([shape, modes, ranks], i) => ({
      key: `b/${name(shape, modes)}`,
      shape,
      dtype: 'float64',
      cores: coresBody(randomTrain(modes, ranks, 200 + i)),
    }));
    const r = await c.call('POST', '/v1/put_cores_batch', { json: { namespace: 'batch', entries } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.count).to.equal(SPLITS.length);
    for (const [i, [, modes, ranks]] of SPLITS.entries()) {
      const back = await served(c, entries[i]!.key, 'batch');
      expectClose(back, denseOf(randomTrain(modes, ranks, 200 + i)), 1e-14, entries[i]!.key);
    }
  });

  it('still refuses a shape whose size the modes do not make, and interleaved trains in another split', async () => {
    const t = randomTrain([2, 3], [1, 2, 1], 1);
    const r = await c.call('POST', '/v1/put_cores', { json: { key: 'bad/size', shape: [7], cores: coresBody(t) } });
    expect(r.status).to.equal(400);
    const il = await c.call('POST', '/v1/put_cores', { json: { key: 'bad/il', shape: [6], layout: 'interleaved', cores: coresBody(t) } });
    expect(il.status).to.equal(400);
    expect(il.body.detail).to.match(/interleaved/);
  });
});
