import { expect } from 'chai';
import { decodeNpy, DESCR_OF } from '../../src/codec/npy.js';
import { ITEM_SIZE, type DType } from '../../src/engine/types.js';
import type { TestServer } from '../helpers/server.js';
import { fill, fillFortran, npyFile, NPY_MAX_ELEMENTS } from './npy-fixtures.js';
import { b64, rng, startStorageServer, tenantClient, type Client } from './helpers.js';

const DESCR = DESCR_OF;

/** Element writer for a dtype: smooth-ish values in range, the same for C and Fortran fills. */
function writer(dtype: DType): (buf: Buffer, o: number, idx: number[]) => void {
  const v = (idx: number[]) => Math.sin(idx.reduce((a, x, j) => a + x * (j + 1) * 0.37, 0.1));
  switch (dtype) {
    case 'float64':
      return (b, o, i) => b.writeDoubleLE(v(i), o);
    case 'float32':
      return (b, o, i) => b.writeFloatLE(v(i), o);
    case 'float16':
      return (b, o, i) => b.writeUInt16LE(0x3c00 + (Math.round((v(i) + 1) * 200) & 0x3ff), o);
    case 'int64':
      return (b, o, i) => b.writeBigInt64LE(BigInt(Math.round(v(i) * 1e6)) * 1000003n, o);
    case 'uint64':
      return (b, o, i) => b.writeBigUInt64LE(BigInt(Math.round((v(i) + 1) * 1e6)) * 1000003n, o);
    case 'int32':
      return (b, o, i) => b.writeInt32LE(Math.round(v(i) * 1e5), o);
    case 'uint32':
      return (b, o, i) => b.writeUInt32LE(Math.round((v(i) + 1) * 1e5), o);
    case 'int16':
      return (b, o, i) => b.writeInt16LE(Math.round(v(i) * 3e4), o);
    case 'uint16':
      return (b, o, i) => b.writeUInt16LE(Math.round((v(i) + 1) * 3e4), o);
    case 'int8':
      return (b, o, i) => b.writeInt8(Math.round(v(i) * 100), o);
    case 'uint8':
      return (b, o, i) => b.writeUInt8(Math.round((v(i) + 1) * 100), o);
    case 'bool':
      return (b, o, i) => b.writeUInt8(v(i) > 0.3 ? 1 : 0, o);
  }
}

function asFloat64(data: Buffer, dtype: DType): number[] {
  const out: number[] = [];
  const n = data.length / ITEM_SIZE[dtype];
  for (let i = 0; i < n; i++) {
    const o = i * ITEM_SIZE[dtype];
    out.push(dtype === 'float64' ? data.readDoubleLE(o) : dtype === 'float32' ? data.readFloatLE(o) : NaN);
  }
  return out;
}

describe('storage: round trips through HTTP', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server);
  });
  after(async () => {
    await server.destroy();
  });

  const SHAPES: number[][] = [[], [1000], [16, 32, 8], [2, 4, 2, 4, 2, 4, 2, 4]];
  for (const dtype of Object.keys(DESCR) as DType[]) {
    it(`stores ${dtype} arrays of 0, 1, 3 and 8 dimensions and serves them back in C order`, async () => {
      for (const shape of SHAPES) {
        const data = fill(shape, ITEM_SIZE[dtype], writer(dtype));
        const key = `rt/${dtype}/${shape.length}d`;
        const put = await c.put({ key, data_b64: b64(npyFile(DESCR[dtype], shape, data)) });
        expect(put.status, put.text).to.equal(200);
        expect(put.body).to.include({ key, namespace: 'default', version: 1, kind: 'array', dtype });
        expect(put.body.shape).to.deep.equal(shape);
        expect(put.body.original_bytes).to.equal(data.length);
        const back = await c.dense(key);
        expect(back.dtype).to.equal(dtype);
        expect(back.shape).to.deep.equal(shape);
        expect(back.headers.get('x-ttstore-verdict')).to.equal(put.body.verdict);
        const v = put.body.verdict as string;
        if (!dtype.startsWith('float') || v === 'exact' || v === 'passthrough') {
          expect(back.data.equals(data), `${dtype} ${JSON.stringify(shape)} ${v}`).to.equal(true);
        } else {
          expect(v).to.equal('safe');
          if (dtype !== 'float16') {
            const x = asFloat64(data, dtype);
            const y = asFloat64(back.data, dtype);
            let num = 0;
            let den = 0;
            for (let i = 0; i < x.length; i++) {
              num += (x[i]! - y[i]!) ** 2;
              den += x[i]! ** 2;
            }
            expect(Math.sqrt(num / den)).to.be.at.most(1e-6 * (1 + 1e-9));
          }
        }
      }
    });
  }

  it('takes Fortran-order and big-endian input and serves C-order little-endian', async () => {
    const shape = [6, 5, 4];
    for (const [descr, dtype] of [
      ['<f8', 'float64'],
      ['<i2', 'int16'],
      ['|u1', 'uint8'],
    ] as const) {
      const w = writer(dtype);
      const put = await c.put({
        key: `fortran/${dtype}`,
        data_b64: b64(npyFile(descr, shape, fillFortran(shape, ITEM_SIZE[dtype], w), { fortran: true })),
      });
      expect(put.status, put.text).to.equal(200);
      const back = await c.dense(`fortran/${dtype}`);
      expect(back.data.equals(fill(shape, ITEM_SIZE[dtype], w))).to.equal(true);
    }
    const be = fill([100], 8, (b, o, [i]) => b.writeDoubleBE(i! * 0.25, o));
    expect((await c.put({ key: 'be/f8', data_b64: b64(npyFile('>f8', [100], be)) })).status).to.equal(200);
    const back = await c.dense('be/f8');
    expect(back.dtype).to.equal('float64');
    expect(back.data.readDoubleLE(8 * 7)).to.equal(1.75);
    const be8 = fill([50], 8, (b, o, [i]) => b.writeBigInt64BE(BigInt(i!) - 25n, o));
    expect((await c.put({ key: 'be/i8', data_b64: b64(npyFile('>i8', [50], be8)) })).status).to.equal(200);
    expect((await c.dense('be/i8')).data.readBigInt64LE(0)).to.equal(-25n);
  });

  it('gives a blob of random bytes back bit-exact, as JSON, raw bytes and .npy', async () => {
    const r = rng(7);
    for (const n of [1, 1000, 100_000]) {
      const blob = Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
      blob[0] = 0x42; // not the .npy magic
      const key = `blob/${n}`;
      const put = await c.put({ key, data_b64: blob.toString('base64') });
      expect(put.status, put.text).to.equal(200);
      expect(put.body).to.include({ kind: 'blob', dtype: 'uint8', original_bytes: n });
      expect(put.body.shape).to.deep.equal([n]);
      const json = await c.serve({ key });
      expect(json.body).to.include({ kind: 'blob', dtype: 'uint8', target: 'dense' });
      expect(Buffer.from(json.body.data_b64, 'base64').equals(blob)).to.equal(true);
      const raw = await fetch(`${server.url}/v1/serve`, {
        method: 'POST',
        headers: { 'X-Api-Key': c.apiKey, 'content-type': 'application/json', Accept: 'application/octet-stream' },
        body: JSON.stringify({ key }),
      });
      expect(raw.headers.get('content-type')).to.match(/application\/octet-stream/);
      expect(Buffer.from(await raw.arrayBuffer()).equals(blob)).to.equal(true);
      expect((await c.dense(key)).data.equals(blob)).to.equal(true);
    }
  });

  it('keeps a compressible blob exact whether or not it compresses', async () => {
    const blob = Buffer.alloc(1 << 16);
    for (let i = 0; i < blob.length; i++) blob[i] = (i >> 8) & 0xff;
    const put = await c.put({ key: 'blob/ramp', data_b64: blob.toString('base64') });
    expect(put.body.verdict).to.be.oneOf(['exact', 'passthrough']);
    expect((await c.dense('blob/ramp')).data.equals(blob)).to.equal(true);
  });

  it('stores an array holding NaN as passthrough and gives it back bit-exact', async () => {
    const shape = [64, 64];
    const data = fill(shape, 8, (b, o, [i, j]) => b.writeDoubleLE(Math.sin(i! * 0.1) * Math.cos(j! * 0.1), o));
    data.writeUInt32LE(0x7ff80001, 8 * 100 + 4); // a NaN with payload bits
    data.writeUInt32LE(0x00000bad, 8 * 100);
    data.writeDoubleLE(-Infinity, 8 * 200);
    const put = await c.put({ key: 'nan', data_b64: b64(npyFile('<f8', shape, data)) });
    expect(put.status, put.text).to.equal(200);
    expect(put.body).to.include({
      verdict: 'passthrough',
      compressed: false,
      n_cores: 0,
      max_rank: 0,
      stored_core_bytes: 0,
      compression_ratio: 1,
    });
    expect(put.body.ranks).to.deep.equal([]);
    expect(put.body.fingerprint).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
    expect((await c.dense('nan')).data.equals(data)).to.equal(true);
  });

  it('takes the binary upload form: x-npy arrays, octet-stream blobs (even with the magic), metadata header', async () => {
    const data = fill([300], 4, (b, o, [i]) => b.writeFloatLE(i! / 7, o));
    const npy = npyFile('<f4', [300], data);
    const a = await c.call('POST', '/v1/put?key=bin%2Farray&domain=simulation', {
      body: npy,
      headers: { 'content-type': 'application/x-npy', 'X-Ttstore-Metadata': JSON.stringify({ run: 3, naïve: 'é' }) },
    });
    expect(a.status, a.text).to.equal(200);
    expect(a.body).to.include({ key: 'bin/array', kind: 'array', dtype: 'float32', domain: 'simulation' });
    const b = await c.call('POST', '/v1/put?key=bin%2Fblob', { body: npy, headers: { 'content-type': 'application/octet-stream' } });
    expect(b.status, b.text).to.equal(200);
    expect(b.body).to.include({ kind: 'blob', dtype: 'uint8', original_bytes: npy.length });
    const got = await c.call('GET', '/v1/get/default/bin%2Farray');
    expect(got.body.metadata).to.deep.equal({ run: 3, naïve: 'é' });
    // raw UTF-8 bytes in the header (what curl sends from a UTF-8 terminal), and ASCII with \u escapes
    for (const header of [Buffer.from('{"city":"Zürich ✓"}', 'utf8').toString('latin1'), '{"city":"Z\\u00fcrich \\u2713"}']) {
      const u = await c.call('POST', '/v1/put?key=bin%2Futf8', {
        body: npy,
        headers: { 'content-type': 'application/x-npy', 'X-Ttstore-Metadata': header },
      });
      expect(u.status, u.text).to.equal(200);
      expect((await c.call('GET', '/v1/get/default/bin%2Futf8')).body.metadata).to.deep.equal({ city: 'Zürich ✓' });
    }
    expect((await c.dense('bin/array')).data.equals(data)).to.equal(true);
    const blob = await c.serve({ key: 'bin/blob' });
    expect(Buffer.from(blob.body.data_b64, 'base64').equals(npy)).to.equal(true);
  });

  it('serves JSON with an .npy v1.0 in data_b64 and every field CONTRACT.md lists', async () => {
    const data = fill([3, 4], 8, (b, o, [i, j]) => b.writeDoubleLE(i! * 10 + j!, o));
    await c.put({ key: 'json/serve', data_b64: b64(npyFile('<f8', [3, 4], data)), metadata: { a: 1 } });
    const r = await c.serve({ key: 'json/serve', target: 'dense' });
    expect(r.status).to.equal(200);
    expect(r.body).to.have.all.keys(
      'key',
      'namespace',
      'version',
      'target',
      'kind',
      'dtype',
      'shape',
      'layout',
      'verdict',
      'fingerprint',
      'data_b64',
    );
    const npy = Buffer.from(r.body.data_b64, 'base64');
    expect(npy[6]).to.equal(1);
    const a = await decodeNpy(npy, NPY_MAX_ELEMENTS);
    expect(a.shape).to.deep.equal([3, 4]);
    expect(a.data.equals(data)).to.equal(true);
    const raw = await c.dense('json/serve');
    expect(raw.headers.get('x-ttstore-key')).to.equal('json%2Fserve');
    expect(raw.headers.get('x-ttstore-namespace')).to.equal('default');
    expect(raw.headers.get('x-ttstore-version')).to.equal('1');
  });
});
