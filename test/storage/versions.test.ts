import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { npyOf, startStorageServer, tenantClient, type Client } from './helpers.js';

const text = (s: string) => Buffer.from(s).toString('base64');

describe('storage: versions, delete, list and caching', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  let other: Client;
  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server, ['default', 'ns2']);
    other = await tenantClient(server);
  });
  after(async () => {
    await server.destroy();
  });

  it('numbers versions 1, 2, 3 and serves any of them', async () => {
    for (const v of [1, 2, 3]) {
      const r = await c.put({ key: 'ver', data_b64: text(`v${v}`), metadata: { v } });
      expect(r.body.version).to.equal(v);
    }
    const latest = await c.call('GET', '/v1/get/default/ver');
    expect(latest.body).to.include({ version: 3 });
    expect(latest.body.metadata).to.deep.equal({ v: 3 });
    const v1 = await c.call('GET', '/v1/get/default/ver?version=1');
    expect(v1.body.metadata).to.deep.equal({ v: 1 });
    const s2 = await c.serve({ key: 'ver', version: 2 });
    expect(Buffer.from(s2.body.data_b64, 'base64').toString()).to.equal('v2');
    expect((await c.call('GET', '/v1/get/default/ver?version=4')).status).to.equal(404);
    expect((await c.serve({ key: 'ver', version: 9 })).status).to.equal(404);
    for (const bad of ['0', '-1', 'x', '1.5']) {
      const r = await c.call('GET', `/v1/get/default/ver?version=${bad}`);
      expect(r.status, bad).to.equal(400);
      expect(r.body.code).to.equal('invalid_request');
    }
    expect((await c.serve({ key: 'ver', version: 0 })).status).to.equal(400);
  });

  it('keeps tenants apart: the same namespace and key are two entries', async () => {
    await c.put({ key: 'mine', data_b64: text('tenant a') });
    expect((await other.call('GET', '/v1/get/default/mine')).status).to.equal(404);
    const o = await other.put({ key: 'mine', data_b64: text('tenant b') });
    expect(o.body.version).to.equal(1);
    expect(Buffer.from((await c.serve({ key: 'mine' })).body.data_b64, 'base64').toString()).to.equal('tenant a');
  });

  it('deletes every version at once, and a re-put continues the numbering with old versions hidden', async () => {
    await c.put({ key: 'del', data_b64: text('1') });
    await c.put({ key: 'del', data_b64: text('2') });
    const d = await c.call('DELETE', '/v1/delete/default/del');
    expect(d.status).to.equal(200);
    expect(d.body).to.include({ key: 'del', namespace: 'default', deleted: true, versions: 2 });
    const day = 86400;
    expect(d.body.purge_after).to.be.closeTo(Date.now() / 1000 + 30 * day, 60);
    expect((await c.call('GET', '/v1/get/default/del')).status).to.equal(404);
    expect((await c.serve({ key: 'del' })).status).to.equal(404);
    expect((await c.call('DELETE', '/v1/delete/default/del')).status).to.equal(404);
    expect((await c.call('DELETE', '/v1/delete/default/never')).status).to.equal(404);
    const list = await c.call('GET', '/v1/list/default?prefix=del');
    expect(list.body.keys).to.deep.equal([]);
    const again = await c.put({ key: 'del', data_b64: text('3') });
    expect(again.body.version).to.equal(3);
    expect((await c.call('GET', '/v1/get/default/del?version=1')).status).to.equal(404);
    expect((await c.call('GET', '/v1/get/default/del?version=3')).status).to.equal(200);
    expect((await c.call('DELETE', '/v1/delete/default/del')).body.versions).to.equal(1);
  });

  it('shows a delete and a re-put at once to GETs whose rows were read (and cached) just before', async () => {
    await c.put({ key: 'hot', data_b64: text('1') });
    await c.put({ key: 'hot', data_b64: text('2') });
    const warm = await Promise.all([
      ...Array.from({ length: 20 }, () => c.call('GET', '/v1/get/default/hot')),
      c.call('GET', '/v1/get/default/hot?version=1'),
    ]);
    expect(warm.map((r) => r.status)).to.deep.equal(Array(21).fill(200));
    const etag = warm[0]!.headers.get('etag')!;
    expect((await c.call('DELETE', '/v1/delete/default/hot')).status).to.equal(200);
    expect((await c.call('GET', '/v1/get/default/hot')).status).to.equal(404);
    expect((await c.call('GET', '/v1/get/default/hot?version=1')).status).to.equal(404);
    expect((await c.call('GET', '/v1/get/default/hot', { headers: { 'If-None-Match': etag } })).status).to.equal(404);
    const again = await c.put({ key: 'hot', data_b64: text('3') });
    const got = await c.call('GET', '/v1/get/default/hot', { headers: { 'If-None-Match': etag } });
    expect(got.status).to.equal(200);
    expect(got.body.version).to.equal(again.body.version).and.equal(3);
    expect(got.headers.get('etag')).to.not.equal(etag);
  });

  it('takes percent-encoded keys in paths, decoded once', async () => {
    for (const key of ['a/b', 'a%2Fb', 'sp ace', 'ünï/cødé', '?#&']) {
      const p = await c.put({ key, data_b64: text(key) });
      expect(p.status).to.equal(200);
      const g = await c.call('GET', `/v1/get/default/${encodeURIComponent(key)}`);
      expect(g.status, key).to.equal(200);
      expect(g.body.key).to.equal(key);
    }
    const bad = await c.call('GET', '/v1/get/default/%E0%A4%A');
    expect(bad.status).to.equal(400);
  });

  it('answers If-None-Match with 304, with an ETag per version and immutable caching for explicit versions', async () => {
    await c.put({ key: 'etag', data_b64: text('one') });
    const a = await c.call('GET', '/v1/get/default/etag');
    const etag = a.headers.get('etag')!;
    expect(etag).to.match(/^"[^"]+"$/);
    expect(a.headers.get('cache-control') ?? '').to.not.include('immutable');
    const same = await c.call('GET', '/v1/get/default/etag', { headers: { 'If-None-Match': etag } });
    expect(same.status).to.equal(304);
    expect(same.text).to.equal('');
    expect(same.headers.get('etag')).to.equal(etag);
    expect((await c.call('GET', '/v1/get/default/etag', { headers: { 'If-None-Match': `W/${etag}, "other"` } })).status).to.equal(304);
    expect((await c.call('GET', '/v1/get/default/etag', { headers: { 'If-None-Match': '"other"' } })).status).to.equal(200);
    const v1 = await c.call('GET', '/v1/get/default/etag?version=1');
    expect(v1.headers.get('cache-control')).to.equal('private, max-age=31536000, immutable');
    expect(v1.headers.get('etag')).to.equal(etag);
    await c.put({ key: 'etag', data_b64: text('two') });
    const b = await c.call('GET', '/v1/get/default/etag', { headers: { 'If-None-Match': etag } });
    expect(b.status).to.equal(200);
    expect(b.headers.get('etag')).to.not.equal(etag);
    const otherTenant = await other.put({ key: 'etag', data_b64: text('one') });
    expect(otherTenant.status).to.equal(200);
    expect((await other.call('GET', '/v1/get/default/etag')).headers.get('etag')).to.not.equal(etag);
  });

  it('lists 2500 keys in byte order with prefix, limit and offset, latest versions only, deleted left out', async () => {
    const keys = Array.from({ length: 2500 }, (_, i) => `k/${String(i).padStart(4, '0')}`);
    const core = npyOf('float32', [1, 2, 1], new Float32Array([1, 2]));
    for (let i = 0; i < keys.length; i += 1000) {
      const r = await c.call('POST', '/v1/put_cores_batch', {
        json: {
          namespace: 'ns2',
          entries: keys.slice(i, i + 1000).map((key) => ({ key, cores: [{ data_b64: core.toString('base64') }] })),
        },
      });
      expect(r.status, r.text).to.equal(200);
    }
    await c.put({ key: 'k/0007', namespace: 'ns2', data_b64: text('v2') });
    await c.call('DELETE', '/v1/delete/ns2/k%2F0003');
    for (const k of ['j', 'k0', 'Z', 'é']) await c.put({ key: k, namespace: 'ns2', data_b64: text(k) });

    const first = await c.call('GET', '/v1/list/ns2?prefix=k%2F&limit=10');
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ namespace: 'ns2', prefix: 'k/', count: 10, total: 2499, limit: 10, offset: 0 });
    expect(first.body.keys.map((k: { key: string }) => k.key)).to.deep.equal([
      'k/0000',
      'k/0001',
      'k/0002',
      'k/0004',
      'k/0005',
      'k/0006',
      'k/0007',
      'k/0008',
      'k/0009',
      'k/0010',
    ]);
    const seven = first.body.keys.find((k: { key: string }) => k.key === 'k/0007');
    expect(seven).to.include({ version: 2, verdict: 'passthrough', compressed: false });
    expect(first.body.keys[0]).to.have.all.keys(
      'key',
      'version',
      'created_at',
      'verdict',
      'compressed',
      'original_bytes',
      'stored_core_bytes',
    );

    const seen: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await c.call('GET', `/v1/list/ns2?limit=1000&offset=${offset}`);
      expect(page.body.total).to.equal(2503);
      seen.push(...page.body.keys.map((k: { key: string }) => k.key));
      if (page.body.count < 1000) break;
    }
    const expected = [...keys.filter((k) => k !== 'k/0003'), 'j', 'k0', 'Z', 'é'].sort((a, b) =>
      Buffer.compare(Buffer.from(a), Buffer.from(b)),
    );
    expect(seen).to.deep.equal(expected);

    const dflt = await c.call('GET', '/v1/list/ns2');
    expect(dflt.body).to.include({ limit: 1000, offset: 0, count: 1000, prefix: '' });
    const past = await c.call('GET', '/v1/list/ns2?offset=5000');
    expect(past.body).to.include({ count: 0, total: 2503 });
    for (const q of ['limit=0', 'limit=10001', 'limit=abc', 'offset=-1', 'limit=1&limit=2']) {
      const r = await c.call('GET', `/v1/list/ns2?${q}`);
      expect(r.status, q).to.equal(400);
      expect(r.body.code).to.equal('invalid_request');
    }
    expect((await c.call('GET', '/v1/list/ns2?limit=10000')).status).to.equal(200);
  });
});
