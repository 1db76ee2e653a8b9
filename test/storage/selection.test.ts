// serve's region, level and points (docs/api.md "Reading parts of an entry"): a part of an entry is
// what slicing (and block-averaging) the whole served array gives, computed from the cores; stored
// data answers the same; blobs and bad selections are 400, too large an output 413, nothing charged.
// An entry far over the payload limit (a 4096^3 train put as its cores) is read in parts.
import { expect } from 'chai';
import { decodeNpy } from '../../src/codec/npy.js';
import { http, skipAgainstExternal } from '../helpers/server.js';
import { admin } from '../helpers/tenants.js';
import { CUBE_SHAPE, cubeValue as f, linearCubeCores } from '../helpers/linear-cube.js';
import { expectProblem, putArray, noise, served, smooth } from '../query/helpers.js';
import { b64, expectClose, npyOf, rng, storageSuite, type Client } from './helpers.js';

type Slice = null | Array<number | null>;

/** The contract's agreement with slicing the whole array: 1e-12 of its largest value, in float64. */
const REL = 1e-12;

/** Python's range(*slice(...).indices(n)), written out for the reference. */
function pyRange(sl: Slice | undefined, n: number): number[] {
  const [start = null, stop = null, step = null] = sl ?? [];
  const st = step ?? 1;
  const clamp = (i: number | null, dflt: number) => {
    if (i === null) return dflt;
    if (i < 0) return Math.max(i + n, st > 0 ? 0 : -1);
    return Math.min(i, st > 0 ? n : n - 1);
  };
  const a = clamp(start, st > 0 ? 0 : n - 1);
  const b = clamp(stop, st > 0 ? n : -1);
  const out: number[] = [];
  for (let i = a; st > 0 ? i < b : i > b; i += st) out.push(i);
  return out;
}

/** `full` (C order over `shape`) averaged over blocks of 2^level[a] cells per axis. */
function blockAverage(full: Float64Array, shape: number[], level: number[]): { data: Float64Array; shape: number[] } {
  const coarse = shape.map((n, a) => n >> level[a]!);
  const data = new Float64Array(coarse.reduce((x, y) => x * y, 1));
  const cells = level.reduce((x, l) => x * 2 ** l, 1);
  for (let f = 0; f < full.length; f++) {
    let rest = f;
    let co = 0;
    let mult = 1;
    for (let a = shape.length - 1; a >= 0; a--) {
      co += ((rest % shape[a]!) >> level[a]!) * mult;
      rest = Math.floor(rest / shape[a]!);
      mult *= coarse[a]!;
    }
    data[co] += full[f]! / cells;
  }
  return { data, shape: coarse };
}

/** array[slices] of a C-order array, and its shape. */
function sliced(full: Float64Array, shape: number[], region: Slice[]): { data: number[]; shape: number[] } {
  const idx = shape.map((n, a) => pyRange(region[a], n));
  const out: number[] = [];
  const walk = (a: number, off: number) => {
    if (a === shape.length) return void out.push(full[off]!);
    for (const i of idx[a]!) walk(a + 1, off * shape[a]! + i);
  };
  walk(0, 0);
  return { data: out, shape: idx.map((v) => v.length) };
}

function values(a: { dtype: string; data: Uint8Array }): Float64Array {
  const b = Buffer.from(a.data);
  const n = a.dtype === 'float64' ? b.length / 8 : b.length / 4;
  return Float64Array.from({ length: n }, (_, i) => (a.dtype === 'float64' ? b.readDoubleLE(i * 8) : b.readFloatLE(i * 4)));
}

/** serve with a selection (asserting 200): the part's shape as answered, and its decoded values. */
async function part(c: Client, body: Record<string, unknown>): Promise<{ shape: number[]; values: Float64Array }> {
  const r = await c.serve(body);
  expect(r.status, `${JSON.stringify(body).slice(0, 200)}: ${r.text.slice(0, 300)}`).to.equal(200);
  const a = await decodeNpy(Buffer.from(r.body.data_b64 as string, 'base64'), 2 ** 30);
  expect(a.shape).to.deep.equal(r.body.shape);
  return { shape: a.shape, values: values(a) };
}

describe('storage: serve reads parts of an entry (region, level, points)', function () {
  this.timeout(120000);
  const suite = storageSuite(['default']);
  let c: Client;
  // key -> the whole array as serve dense gives it
  const entries = new Map<string, { shape: number[]; full: Float64Array }>();

  before(async () => {
    c = suite.c;
    await putArray(c, 'smooth', 'float64', [48, 64], smooth([48, 64], 3), { expect: 'compressed' });
    await putArray(c, 'noise', 'float64', [12, 10, 4], noise(480, 5), { expect: 'passthrough' });
    // A random train in the interleaved layout of [8, 4, 6] (mode sizes [3, 2, 2, 2, 2, 2, 2]).
    const r = rng(11);
    const modes = [3, 2, 2, 2, 2, 2, 2];
    const ranks = [1, 3, 4, 4, 4, 3, 2, 1];
    const cores = modes.map((n, k) => {
      const core = Float64Array.from({ length: ranks[k]! * n * ranks[k + 1]! }, () => 2 * r() - 1);
      return { data_b64: b64(npyOf('float64', [ranks[k]!, n, ranks[k + 1]!], core)) };
    });
    const p = await c.call('POST', '/v1/put_cores', {
      json: { key: 'inter', shape: [8, 4, 6], layout: 'interleaved', dtype: 'float64', cores },
    });
    expect(p.status, p.text).to.equal(200);
    // A row_major train over a split of the caller's: [10, 12] as modes [5, 24]
    const q = await c.call('POST', '/v1/put_cores', {
      json: {
        key: 'split',
        shape: [10, 12],
        dtype: 'float64',
        cores: [
          {
            data_b64: b64(
              npyOf(
                'float64',
                [1, 5, 2],
                Float64Array.from({ length: 10 }, () => r()),
              ),
            ),
          },
          {
            data_b64: b64(
              npyOf(
                'float64',
                [2, 24, 1],
                Float64Array.from({ length: 48 }, () => r()),
              ),
            ),
          },
        ],
      },
    });
    expect(q.status, q.text).to.equal(200);
    for (const [key, shape] of [
      ['smooth', [48, 64]],
      ['noise', [12, 10, 4]],
      ['inter', [8, 4, 6]],
      ['split', [10, 12]],
    ] as const) {
      entries.set(key, { shape: [...shape], full: await served(c, key) });
    }
  });

  it('region answers array[slices]: negative indices and steps, null for a whole axis, missing axes whole', async () => {
    const regions: Record<string, Slice[][]> = {
      smooth: [
        [
          [5, 40, 3],
          [null, null, -1],
        ],
        [[-1]],
        [null, [60, 2, -7]],
        [
          [47, 0, -5],
          [0, 64, 63],
        ],
        [[10, 10]],
      ],
      noise: [
        [
          [2, 9],
          [null, null, 2],
          [-1, -5, -1],
        ],
        [null, [3, 4]],
        [],
      ],
      inter: [
        [[7, null, -2], null, [1, 5]],
        [[0, 8, 3], [-2]],
        [null, null, [null, null, -1]],
      ],
      split: [
        [
          [1, 9, 2],
          [11, 0, -3],
        ],
        [[3, 4]],
      ],
    };
    for (const [key, list] of Object.entries(regions)) {
      const { shape, full } = entries.get(key)!;
      for (const region of list) {
        const want = sliced(full, shape, region);
        const got = await part(c, { key, region });
        expect(got.shape, `${key} ${JSON.stringify(region)}`).to.deep.equal(want.shape);
        expectClose(got.values, want.data, REL, `${key} ${JSON.stringify(region)}`);
      }
    }
  });

  it('level averages 2^level cells along each axis (one level for all, or one per axis), then region indexes the coarse grid', async () => {
    const cases: Array<[string, number | number[], Slice[] | undefined]> = [
      ['smooth', 2, undefined],
      ['smooth', [4, 6], undefined],
      [
        'smooth',
        [0, 3],
        [
          [null, null, -3],
          [1, -1],
        ],
      ],
      ['noise', [2, 1, 2], undefined],
      ['inter', [3, 2, 1], undefined],
      ['inter', [1, 0, 1], [[-1, 0, -1], null, [1]]],
      ['split', [1, 2], undefined],
    ];
    for (const [key, level, region] of cases) {
      const { shape, full } = entries.get(key)!;
      const lv = typeof level === 'number' ? shape.map(() => level) : level;
      const coarse = blockAverage(full, shape, lv);
      const want = sliced(coarse.data, coarse.shape, region ?? []);
      const got = await part(c, { key, level, ...(region ? { region } : {}) });
      expect(got.shape, `${key} level ${JSON.stringify(level)}`).to.deep.equal(want.shape);
      expectClose(got.values, want.data, REL, `${key} level ${JSON.stringify(level)}`);
    }
  });

  it('points answer a 1-D array of their values in the order given (negative indices from the end)', async () => {
    for (const [key, { shape, full }] of entries) {
      const r = rng(shape.length * 31);
      const points = Array.from({ length: 25 }, () => shape.map((n) => Math.floor(r() * 2 * n) - n));
      const want = points.map((p) => full[p.reduce((off, i, a) => off * shape[a]! + (i < 0 ? i + shape[a]! : i), 0)]!);
      const got = await part(c, { key, points });
      expect(got.shape).to.deep.equal([25]);
      expectClose(got.values, want, REL, `${key} points`);
      // on the coarse grid with a level
      const coarse = blockAverage(
        full,
        shape,
        shape.map(() => 1),
      );
      const cp = [shape.map((n) => (n >> 1) - 1), shape.map(() => 0)];
      const cw = cp.map((p) => coarse.data[p.reduce((off, i, a) => off * coarse.shape[a]! + i, 0)]!);
      expectClose((await part(c, { key, points: cp, level: 1 })).values, cw, REL, `${key} coarse points`);
    }
  });

  it('a part of a large passthrough entry reads only the rows it lies in from the stored data, and answers as slicing it', async () => {
    skipAgainstExternal('it reads the blob-read counter of one node, and the balancer spreads the reads');
    const shape = [256, 32, 16]; // 1 MiB of float64 noise, stored as it came
    const payload = 256 * 32 * 16 * 8;
    await putArray(c, 'big-noise', 'float64', shape, noise(256 * 32 * 16, 9), { expect: 'passthrough' });
    const full = await served(c, 'big-noise');
    const blobBytesRead = async () => {
      const r = await http(suite.server.url, 'GET', '/gate/metrics', { headers: { Authorization: `Bearer ${suite.server.serviceKey}` } });
      return Number(/^ttstore_blob_read_bytes_total (\S+)$/m.exec(r.text)![1]);
    };
    // [selection, bytes of the stored data it reads]
    const cases: Array<[{ region?: Slice[]; level?: number[]; points?: number[][] }, number]> = [
      [{ region: [[17, 18]] }, 32 * 16 * 8], // one row: the trailing axes whole
      [{ region: [[200, 201], [3, 9], null] }, 6 * 16 * 8], // a run within one leading index
      [{ region: [[-1], [31, 0, -2], [15, null, -3]] }, 31 * 16 * 8], // negative steps: rows 1..31 of index 255
      [{ level: [1, 0, 2], region: [[40, 44], null, [null, null, -1]] }, 8 * 32 * 16 * 8], // coarse rows 40..43: fine rows 80..87
      [
        {
          points: [
            [5, 0, 0],
            [6, 31, 15],
            [5, 7, -1],
          ],
        },
        2 * 32 * 16 * 8,
      ], // rows 5 and 6
      [{ region: [null, [3]] }, payload], // a column spans the whole array: read once, whole
    ];
    for (const [sel, bytes] of cases) {
      const label = JSON.stringify(sel);
      let want: number[];
      if (sel.points) {
        want = sel.points.map((p) => full[p.reduce((off, i, a) => off * shape[a]! + (i < 0 ? i + shape[a]! : i), 0)]!);
      } else {
        const coarse = sel.level ? blockAverage(full, shape, sel.level) : { data: full, shape };
        want = sliced(coarse.data, coarse.shape, sel.region ?? []).data;
      }
      const before = await blobBytesRead();
      const got = await part(c, { key: 'big-noise', ...sel });
      expect((await blobBytesRead()) - before, label).to.equal(bytes);
      expectClose(got.values, want, REL, label);
    }
  });

  it('the JSON answer carries the part as data_b64 with its shape, and costs what serve dense costs (0.5 CU)', async () => {
    const before = (await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.breakdown.serve as number;
    const r = await c.serve({
      key: 'smooth',
      region: [
        [0, 2],
        [0, 3],
      ],
    });
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({ key: 'smooth', kind: 'array', dtype: 'float64', target: 'dense' });
    expect(r.body.shape).to.deep.equal([2, 3]);
    const a = await decodeNpy(Buffer.from(r.body.data_b64, 'base64'), 100);
    expect(a.shape).to.deep.equal([2, 3]);
    const after = (await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.breakdown.serve as number;
    expect(after - before).to.be.closeTo(0.5, 1e-9);
  });

  it('bad selections are 400, too large an output 413, blobs 400, and none of them is charged', async () => {
    const put = await c.call('POST', '/v1/put?key=blob', {
      body: Buffer.from('just bytes'),
      headers: { 'Content-Type': 'application/octet-stream' },
    });
    expect(put.status, put.text).to.equal(200);
    const usage = async () => (await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.cus_used as number;
    const before = await usage();
    const bad: Array<[Record<string, unknown>, number, string]> = [
      [{ key: 'smooth', region: [[0, 10, 0]] }, 400, 'step'],
      [{ key: 'smooth', region: [null, null, null] }, 400, '3 slices'],
      [{ key: 'smooth', region: [[0, 'a']] }, 400, 'region'],
      [{ key: 'smooth', points: [[48, 0]] }, 400, 'out of range'],
      [{ key: 'smooth', points: [[-49, 0]] }, 400, 'out of range'],
      [{ key: 'smooth', points: [[1, 2, 3]] }, 400, 'axes'],
      [{ key: 'smooth', level: 5 }, 400, 'coarsened 4 levels at most'],
      [{ key: 'smooth', level: [1] }, 400, 'level'],
      [{ key: 'smooth', level: -1 }, 400, 'level'],
      [{ key: 'smooth', region: [[0, 1]], points: [[0, 0]] }, 400, 'not both'],
      [{ key: 'smooth', region: [[0, 1]], target: 'cores' }, 400, 'target dense'],
      [{ key: 'blob', region: [[0, 1]] }, 400, 'blob'],
      [{ key: 'blob', points: [[0]] }, 400, 'blob'],
      [{ key: 'blob', level: 1 }, 400, 'blob'],
    ];
    for (const [body, status, words] of bad) {
      const r = await c.serve(body);
      expectProblem(r, status, status === 400 ? 'invalid_request' : 'payload_too_large');
      expect(r.body.detail, JSON.stringify(body)).to.include(words);
    }
    expect(await usage()).to.equal(before);
  });

  describe('an entry of shape [4096, 4096, 4096] put as a rank-2 train (256 GiB dense as float32)', () => {
    before(async () => {
      const r = await c.call('POST', '/v1/put_cores', {
        json: { key: 'cube', shape: CUBE_SHAPE, dtype: 'float32', cores: linearCubeCores() },
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ verdict: 'exact', original_bytes: 4 * 4096 ** 3 });
    });

    it('a whole dense serve is 413 naming region, level and points, and is not charged', async () => {
      const before = (await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.cus_used as number;
      const r = await c.serve({ key: 'cube' });
      expectProblem(r, 413, 'payload_too_large');
      expect(r.body.detail).to.include('region').and.include('level').and.include('points');
      expect((await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.cus_used).to.equal(before);
    });

    it('a plane, a line, 1000 points and a level-5 view are the values of i + 2j + 3k, each in seconds at most', async () => {
      let t0 = Date.now();
      const plane = await part(c, { key: 'cube', region: [null, [1000, 1001], [null, null, 8]] });
      const tPlane = Date.now() - t0;
      expect(plane.shape).to.deep.equal([4096, 1, 512]);
      for (const [i, k] of [
        [0, 0],
        [4095, 511],
        [1234, 77],
      ] as const) {
        expect(plane.values[i * 512 + k]).to.equal(f(i, 1000, 8 * k));
      }
      const line = await part(c, {
        key: 'cube',
        region: [
          [17, 18],
          [-1, -2, -1],
        ],
      });
      expect(line.shape).to.deep.equal([1, 1, 4096]);
      line.values.forEach((v, k) => expect(v).to.equal(f(17, 4095, k)));

      const r = rng(99);
      const points = Array.from({ length: 1000 }, () => [0, 1, 2].map(() => Math.floor(r() * 4096)));
      t0 = Date.now();
      const pts = await part(c, { key: 'cube', points });
      const tPoints = Date.now() - t0;
      pts.values.forEach((v, p) => expect(v).to.equal(f(points[p]![0]!, points[p]![1]!, points[p]![2]!)));

      t0 = Date.now();
      const coarse = await part(c, { key: 'cube', level: 5 });
      const tCoarse = Date.now() - t0;
      expect(coarse.shape).to.deep.equal([128, 128, 128]);
      for (const [a, b, k] of [
        [0, 0, 0],
        [127, 5, 64],
        [3, 127, 127],
      ] as const) {
        expect(coarse.values[(a * 128 + b) * 128 + k]).to.equal(f(32 * a + 15.5, 32 * b + 15.5, 32 * k + 15.5));
      }
      // Generous bounds (a loaded 2-core CI host); bench:partial measures them properly.
      expect(tPlane, 'plane ms').to.be.below(5000);
      expect(tPoints, 'points ms').to.be.below(2000);
      expect(tCoarse, 'level-5 view ms').to.be.below(5000);
    });

    it('a selection whose output is over the payload limit is 413, uncharged', async () => {
      const before = (await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.cus_used as number;
      const r = await c.serve({ key: 'cube', region: [[0, 8]] });
      expectProblem(r, 413, 'payload_too_large');
      expect(r.body.detail).to.include('[8, 4096, 4096]');
      expect((await admin(suite.server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.cus_used).to.equal(before);
    });
  });
});
