import { expect } from 'chai';
import { decodeNpy } from '../../src/codec/npy.js';
import type { TestServer } from '../helpers/server.js';
import { npyOf, startStorageServer, tenantClient, type Client } from './helpers.js';
import { NPY_MAX_ELEMENTS } from './npy-fixtures.js';

/**
 * Cores of f(i) = 2^(i / 2^d) over i in [0, 2^d), a rank-1 QTT: with i = sum_k b_k 2^(d-1-k)
 * (first core the most significant bit), f = prod_k 2^(b_k 2^(-1-k)).
 */
function expCores(d: number): { cores: Float64Array[]; f: (i: number) => number } {
  const cores = Array.from({ length: d }, (_, k) => new Float64Array([1, 2 ** (2 ** (-1 - k))]));
  return { cores, f: (i) => 2 ** (i / 2 ** d) };
}

const b64 = (buf: Buffer) => buf.toString('base64');

describe('storage: put_cores, put_cores_batch and serve cores', function () {
  this.timeout(60000);
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server);
  });
  after(async () => {
    await server.destroy();
  });

  it('stores cores made from a known function; serve dense equals the function', async () => {
    const d = 12;
    const { cores, f } = expCores(d);
    const put = await c.call('POST', '/v1/put_cores', {
      json: {
        key: 'exp',
        shape: [64, 64],
        dtype: 'float64',
        metadata: { fn: 'exp2' },
        cores: cores.map((core) => ({ data_b64: b64(npyOf('float64', [1, 2, 1], core)) })),
      },
    });
    expect(put.status, put.text).to.equal(200);
    expect(put.body).to.include({
      key: 'exp',
      version: 1,
      verdict: 'exact',
      compressed: true,
      n_cores: d,
      max_rank: 1,
      dtype: 'float64',
      layout: 'row_major',
      original_bytes: 4096 * 8,
      stored_core_bytes: d * 2 * 8,
      kind: 'array',
    });
    expect(put.body.shape).to.deep.equal([64, 64]);
    expect(put.body.fingerprint).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
    const back = await c.dense('exp');
    expect(back.shape).to.deep.equal([64, 64]);
    for (let i = 0; i < 4096; i++) expect(back.data.readDoubleLE(8 * i)).to.be.closeTo(f(i), 1e-12 * f(i));

    // serve target cores gives the same cores back, in the form put_cores takes
    const sc = await c.serve({ key: 'exp', target: 'cores' });
    expect(sc.status).to.equal(200);
    expect(sc.body).to.include({ key: 'exp', target: 'cores', dtype: 'float64', layout: 'row_major' });
    expect(sc.body.ranks).to.deep.equal(new Array(d + 1).fill(1));
    expect(sc.body.cores).to.have.length(d);
    const k3 = await decodeNpy(Buffer.from(sc.body.cores[3].data_b64, 'base64'), NPY_MAX_ELEMENTS);
    expect(k3.shape).to.deep.equal([1, 2, 1]);
    expect(sc.body.cores[3].shape).to.deep.equal([1, 2, 1]);
    expect(k3.data.readDoubleLE(8)).to.equal(cores[3]![1]);
  });

  it('rounds to an integer dtype and defaults to float32 of shape [prod n]', async () => {
    const { cores, f } = expCores(4);
    const r = await c.call('POST', '/v1/put_cores', {
      json: {
        key: 'exp-int',
        dtype: 'int16',
        cores: cores.map((k) => ({ data_b64: b64(npyOf('float32', [1, 2, 1], new Float32Array(k.map((x) => x * 10)))) })),
      },
    });
    expect(r.status, r.text).to.equal(200);
    const back = await c.dense('exp-int');
    expect(back.dtype).to.equal('int16');
    expect(back.shape).to.deep.equal([16]);
    const f32 = cores.map((k) => k.map((x) => Math.fround(x * 10)));
    for (let i = 0; i < 16; i++) {
      const bits = [3, 2, 1, 0].map((s) => (i >> s) & 1);
      const want = bits.reduce((a, b, k) => a * f32[k]![b]!, 1);
      expect(back.data.readInt16LE(2 * i)).to.equal(Math.round(want));
      expect(want).to.be.closeTo(f(i) * 1e4, 0.01);
    }
    const dflt = await c.call('POST', '/v1/put_cores', {
      json: { key: 'exp-f32', cores: cores.map((k) => ({ data_b64: b64(npyOf('float64', [1, 2, 1], k)) })) },
    });
    expect(dflt.body).to.include({ dtype: 'float32', original_bytes: 16 * 4 });
    expect(dflt.body.shape).to.deep.equal([16]);
  });

  it('refuses bad cores with 400 and stores nothing', async () => {
    const good = b64(npyOf('float64', [1, 2, 1], new Float64Array([1, 2])));
    const cases: Array<[string, Record<string, unknown>]> = [
      ['r0 not 1', { cores: [{ data_b64: b64(npyOf('float64', [2, 2, 1], new Float64Array(4))) }] }],
      ['rank mismatch', { cores: [{ data_b64: b64(npyOf('float64', [1, 2, 2], new Float64Array(4))) }, { data_b64: good }] }],
      ['last rank not 1', { cores: [{ data_b64: b64(npyOf('float64', [1, 2, 2], new Float64Array(4))) }] }],
      ['not 3-D', { cores: [{ data_b64: b64(npyOf('float64', [2], new Float64Array(2))) }] }],
      ['int core', { cores: [{ data_b64: b64(npyOf('int32', [1, 2, 1], new Int32Array(2))) }] }],
      ['NaN', { cores: [{ data_b64: b64(npyOf('float64', [1, 2, 1], new Float64Array([1, NaN]))) }] }],
      ['Inf', { cores: [{ data_b64: b64(npyOf('float32', [1, 2, 1], new Float32Array([Infinity, 1]))) }] }],
      ['shape product', { shape: [3], cores: [{ data_b64: good }] }],
      ['bool dtype', { dtype: 'bool', cores: [{ data_b64: good }] }],
      ['bad layout', { layout: 'zigzag', cores: [{ data_b64: good }] }],
      [
        'interleaved modes',
        { layout: 'interleaved', shape: [2, 2], cores: [{ data_b64: b64(npyOf('float64', [1, 4, 1], new Float64Array(4))) }] },
      ],
      ['no cores', { cores: [] }],
      ['bad base64', { cores: [{ data_b64: '***' }] }],
    ];
    for (const [name, body] of cases) {
      const r = await c.call('POST', '/v1/put_cores', { json: { key: `bad/${name}`, ...body } });
      expect(r.status, name).to.equal(400);
      expect(r.body.code, name).to.equal('invalid_request');
      expect((await c.call('GET', `/v1/get/default/${encodeURIComponent(`bad/${name}`)}`)).status).to.equal(404);
    }
  });

  it('stores a batch all or nothing: one bad entry stores nothing and names its index', async () => {
    const core = (v: number) => ({ data_b64: b64(npyOf('float64', [1, 2, 1], new Float64Array([v, v + 1]))) });
    const bad = await c.call('POST', '/v1/put_cores_batch', {
      json: {
        entries: [
          { key: 'b/0', cores: [core(0)] },
          { key: 'b/1', cores: [core(1)] },
          { key: 'b/2', cores: [{ data_b64: 'AAAA' }] },
          { key: 'b/3', cores: [core(3)] },
        ],
      },
    });
    expect(bad.status).to.equal(400);
    expect(bad.body).to.include({ code: 'invalid_request', index: 2 });
    expect((await c.call('GET', '/v1/list/default?prefix=b%2F')).body.total).to.equal(0);

    const ok = await c.call('POST', '/v1/put_cores_batch', {
      json: {
        namespace: 'default',
        entries: [
          { key: 'b/0', cores: [core(0)] },
          { key: 'b/1', cores: [core(1)], metadata: { i: 1 } },
          { key: 'b/0', cores: [core(5)] },
        ],
      },
    });
    expect(ok.status, ok.text).to.equal(200);
    expect(ok.body).to.include({ namespace: 'default', count: 3 });
    expect(ok.body.results.map((r: { key: string; version: number }) => `${r.key}@${r.version}`)).to.deep.equal([
      'b/0@1',
      'b/1@1',
      'b/0@2',
    ]);
    expect((await c.dense('b/0')).data.readFloatLE(0)).to.equal(5);
    for (const entries of [[], Array.from({ length: 1001 }, (_, i) => ({ key: `x${i}`, cores: [core(0)] }))]) {
      const r = await c.call('POST', '/v1/put_cores_batch', { json: { entries } });
      expect(r.status).to.equal(400);
    }
  });

  it('answers serve target cores of a passthrough entry with 409, gpu with 501, unknown targets with 400', async () => {
    await c.put({ key: 'plain', data_b64: Buffer.from('plain').toString('base64') });
    const r = await c.serve({ key: 'plain', target: 'cores' });
    expect(r.status).to.equal(409);
    expect(r.body.code).to.equal('not_compressed');
    const gpu = await c.serve({ key: 'exp', target: 'gpu', device: 'cuda:0' });
    expect(gpu.status).to.be.oneOf([501, 503]);
    expect(gpu.body.code).to.be.oneOf(['gpu_unsupported', 'gpu_unavailable']);
    const badDevice = await c.serve({ key: 'exp', target: 'gpu', device: 'gpu:0' });
    expect(badDevice.status).to.equal(400);
    const other = await c.serve({ key: 'exp', target: 'tpu' });
    expect(other.status).to.equal(400);
  });
});
