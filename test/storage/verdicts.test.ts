import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { b64, bytesOf, npyOf, rng, smoothField, startStorageServer, tenantClient, type Client } from './helpers.js';

describe('storage: the Oracle verdicts', function () {
  this.timeout(180000);
  let server: TestServer;
  let c: Client;
  const N = 1024; // 2^20 elements
  let field: Float64Array;
  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server);
    field = smoothField(N) as Float64Array;
  });
  after(async () => {
    await server.destroy();
  });

  it('stores a smooth 2^20 float64 field at the default domain as safe or exact, error <= 1e-6, ratio > 100', async () => {
    const put = await c.put({ key: 'smooth', data_b64: b64(npyOf('float64', [N, N], field)) });
    expect(put.status, put.text).to.equal(200);
    expect(put.body.verdict).to.be.oneOf(['safe', 'exact']);
    expect(put.body.compressed).to.equal(true);
    expect(put.body.domain).to.equal('structured_data');
    expect(put.body.fingerprint.relative_error).to.be.at.most(1e-6);
    expect(put.body.compression_ratio).to.be.above(100);
    expect(put.body.compression_ratio).to.be.closeTo(put.body.original_bytes / put.body.stored_core_bytes, 1e-9);
    expect(put.body.n_cores).to.equal(put.body.ranks.length - 1);
    expect(put.body.ranks[0]).to.equal(1);
    expect(put.body.ranks[put.body.ranks.length - 1]).to.equal(1);
    expect(put.body.max_rank).to.equal(Math.max(...put.body.ranks));

    // The fingerprint is measured on what serve returns: check it against the dense reconstruction.
    const back = await c.dense('smooth');
    const y = new Float64Array(back.data.buffer, back.data.byteOffset, back.data.length / 8);
    let num = 0;
    let den = 0;
    let maxAbs = 0;
    for (let i = 0; i < field.length; i++) {
      const d = field[i]! - y[i]!;
      num += d * d;
      den += field[i]! * field[i]!;
      maxAbs = Math.max(maxAbs, Math.abs(d));
    }
    expect(Math.sqrt(num / den)).to.be.closeTo(put.body.fingerprint.relative_error, 1e-12 + 1e-3 * put.body.fingerprint.relative_error);
    expect(maxAbs).to.be.closeTo(put.body.fingerprint.max_abs_error, 1e-15 + 1e-6 * maxAbs);

    const got = await c.call('GET', '/v1/get/default/smooth');
    expect(got.body).to.include({ oracle_verdict: put.body.verdict, compressed: true, total_core_bytes: put.body.stored_core_bytes });
  });

  it('stores the same field with max_rank 1 as weak', async () => {
    const put = await c.put({ key: 'smooth-r1', data_b64: b64(npyOf('float64', [N, N], field)), max_rank: 1 });
    expect(put.status, put.text).to.equal(200);
    expect(put.body.verdict).to.equal('weak');
    expect(put.body.compressed).to.equal(true);
    expect(put.body.max_rank).to.equal(1);
    expect(put.body.fingerprint.relative_error).to.be.above(1e-6);
  });

  it('stores a field that cannot meet its tolerance as passthrough when max_rank is not set, bit-exact', async () => {
    const r = rng(11);
    const noise = new Float64Array(1 << 16).map(() => r() - 0.5);
    const put = await c.put({ key: 'noise', data_b64: b64(npyOf('float64', [256, 256], noise)) });
    expect(put.status, put.text).to.equal(200);
    expect(put.body).to.include({ verdict: 'passthrough', compressed: false, compression_ratio: 1, stored_core_bytes: 0 });
    expect((await c.dense('noise')).data.equals(bytesOf(noise))).to.equal(true);
  });

  it('lets tolerance override the domain, and the lossless domain keeps data exact', async () => {
    const f32 = smoothField(256, Float32Array);
    const loose = await c.put({ key: 'loose', data_b64: b64(npyOf('float32', [256, 256], f32)), domain: 'lossless', tolerance: 1e-2 });
    expect(loose.body.tolerance).to.equal(1e-2);
    expect(loose.body.fingerprint.relative_error).to.be.at.most(1e-2);
    const lossless = await c.put({ key: 'lossless', data_b64: b64(npyOf('float32', [256, 256], f32)), domain: 'lossless' });
    expect(lossless.body.verdict).to.be.oneOf(['exact', 'passthrough']);
    expect((await c.dense('lossless')).data.equals(bytesOf(f32))).to.equal(true);
  });

  it('stores data below the compression threshold as passthrough', async () => {
    const small = new Float64Array(500).map((_, i) => i);
    const put = await c.put({ key: 'small', data_b64: b64(npyOf('float64', [500], small)) });
    expect(put.body).to.include({ verdict: 'passthrough', compressed: false, n_cores: 0 });
  });
});
