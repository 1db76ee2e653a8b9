import { expect } from 'chai';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestServer } from '../helpers/server.js';
import { http } from '../helpers/server.js';
import { npyFile } from './npy-fixtures.js';
import { startStorageServer, tenantClient, type Client } from './helpers.js';

const MAX = 65536;

async function blobFiles(dataDir: string): Promise<string[]> {
  const root = path.join(dataDir, 'blobs');
  const out: string[] = [];
  for (const sub of await readdir(root)) for (const f of await readdir(path.join(root, sub))) out.push(path.join(root, sub, f));
  return out;
}

describe('storage: every 4xx of CONTRACT.md section 4 that storage produces', function () {
  this.timeout(60000);
  let server: TestServer;
  let c: Client;
  before(async () => {
    server = await startStorageServer({ env: { SVC_GATE_MAX_PAYLOAD_BYTES: String(MAX) } });
    c = await tenantClient(server, ['default', 'ns2']);
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  const f64 = (n: number) => Buffer.from(new Float64Array(n).map((_, i) => i).buffer);
  const good = npyFile('<f8', [4], f64(4)).toString('base64');

  /** Status and code, problem+json, and nothing stored under the key. */
  async function expectRejected(
    r: { status: number; body: any; headers: Headers },
    status: number,
    code: string,
    key = 'x',
  ): Promise<void> {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(r.body).to.include({ status, code, type: `/problems/${code}` });
    expect(r.body.detail).to.be.a('string');
    const list = await c.call('GET', '/v1/list/default');
    expect(list.body.total, `something was stored after a ${status}`).to.equal(0);
    if (Buffer.byteLength(key) <= 1024 && !/[\u0000-\u001f\u007f]/.test(key)) {
      expect((await c.call('GET', `/v1/get/default/${encodeURIComponent(key)}`)).status).to.equal(404);
    }
  }

  it('400 for bad base64', async () => {
    await expectRejected(await c.put({ key: 'x', data_b64: 'this is not base64!' }), 400, 'invalid_request');
  });
  it('400 for a truncated .npy', async () => {
    const npy = npyFile('<f8', [100], f64(100));
    await expectRejected(await c.put({ key: 'x', data_b64: npy.subarray(0, 40).toString('base64') }), 400, 'invalid_request');
    await expectRejected(await c.put({ key: 'x', data_b64: npy.subarray(0, 200).toString('base64') }), 400, 'invalid_request');
  });
  it('400 for a shape/length mismatch', async () => {
    await expectRejected(await c.put({ key: 'x', data_b64: npyFile('<f8', [5], f64(4)).toString('base64') }), 400, 'invalid_request');
  });
  it('400 for object and structured dtypes', async () => {
    await expectRejected(
      await c.put({ key: 'x', data_b64: npyFile('|O', [2], Buffer.alloc(16)).toString('base64') }),
      400,
      'invalid_request',
    );
    const structured = npyFile('', [1], Buffer.alloc(12), {
      headerText: "{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
    });
    await expectRejected(await c.put({ key: 'x', data_b64: structured.toString('base64') }), 400, 'invalid_request');
  });
  it('400 for an unknown domain, naming the valid ones', async () => {
    const r = await c.put({ key: 'x', data_b64: good, domain: 'astrology' });
    await expectRejected(r, 400, 'invalid_request');
    expect(r.body.detail).to.include('structured_data');
  });
  it('400 for tolerance 1.5, negative tolerance, max_rank 0 or 4097', async () => {
    for (const extra of [
      { tolerance: 1.5 },
      { tolerance: -0.1 },
      { tolerance: 'small' },
      { max_rank: 0 },
      { max_rank: 4097 },
      { max_rank: 2.5 },
    ]) {
      await expectRejected(await c.put({ key: 'x', data_b64: good, ...extra }), 400, 'invalid_request');
    }
  });
  it('400 for a key of 1025 bytes, an empty key, a key with a control character', async () => {
    await expectRejected(await c.put({ key: 'é'.repeat(512) + 'x', data_b64: good }), 400, 'invalid_request', 'é'.repeat(512) + 'x');
    await expectRejected(await c.put({ key: '', data_b64: good }), 400, 'invalid_request', '');
    await expectRejected(await c.put({ key: 'a\u0007b', data_b64: good }), 400, 'invalid_request', 'a\u0007b');
    await expectRejected(await c.put({ key: 'a\u007fb', data_b64: good }), 400, 'invalid_request', 'a\u007fb');
    const ok = 'é'.repeat(512); // exactly 1024 bytes
    expect((await c.put({ key: ok, namespace: 'ns2', data_b64: good })).status).to.equal(200);
    const long = await c.call('GET', `/v1/get/default/${encodeURIComponent('k'.repeat(1025))}`);
    expect(long.status).to.equal(400);
    expect((await c.call('GET', '/v1/get/default/a%07b')).status).to.equal(400);
  });
  it('400 for a namespace with a slash or other characters outside the rule', async () => {
    for (const namespace of ['a/b', '', '-lead', 'x'.repeat(129), 'sp ace']) {
      await expectRejected(await c.put({ key: 'x', namespace, data_b64: good }), 400, 'invalid_request');
    }
    expect((await c.call('GET', '/v1/list/a%2Fb')).status).to.equal(400);
  });
  it('400 for missing or mistyped fields and for bodies that are not a JSON object', async () => {
    await expectRejected(await c.put({ key: 'x' }), 400, 'invalid_request');
    await expectRejected(await c.put({ data_b64: good }), 400, 'invalid_request');
    await expectRejected(await c.put({ key: 'x', data_b64: good, metadata: [1, 2] }), 400, 'invalid_request');
    await expectRejected(await c.put({ key: 7, data_b64: good }), 400, 'invalid_request');
    await expectRejected(
      await c.call('POST', '/v1/put', { body: '[1, 2]', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
    await expectRejected(
      await c.call('POST', '/v1/put', { body: '{"key": "x", ', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
    await expectRejected(
      await c.call('POST', '/v1/serve', { body: '{nope', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
  });
  it('413 for a body over the limit and for a decoded payload over the limit', async () => {
    const big = Buffer.alloc(MAX + 1, 1);
    await expectRejected(await c.put({ key: 'x', data_b64: big.toString('base64') }), 413, 'payload_too_large');
    const bigNpy = npyFile('<f8', [MAX / 8 + 1], f64(MAX / 8 + 1));
    await expectRejected(await c.put({ key: 'x', data_b64: bigNpy.toString('base64') }), 413, 'payload_too_large');
    const huge = JSON.stringify({ key: 'x', data_b64: 'A'.repeat(4 * 1024 * 1024) });
    await expectRejected(
      await c.call('POST', '/v1/put', { body: huge, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
    await expectRejected(
      await c.call('POST', '/v1/put?key=x', { body: big, headers: { 'content-type': 'application/octet-stream' } }),
      413,
      'payload_too_large',
    );
    // exactly at the limit is fine
    const atLimit = await c.call('POST', '/v1/put?key=x&namespace=ns2', {
      body: Buffer.alloc(MAX, 2),
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(atLimit.status).to.equal(200);
  });
  it('415 for a body that is not JSON on a JSON endpoint', async () => {
    for (const [p, type] of [
      ['/v1/put', 'text/plain'],
      ['/v1/put', 'application/x-www-form-urlencoded'],
      ['/v1/serve', 'text/plain'],
      ['/v1/put_cores', 'application/x-npy'],
      ['/v1/put_cores_batch', 'text/csv'],
    ]) {
      await expectRejected(await c.call('POST', p!, { body: 'key=x', headers: { 'content-type': type! } }), 415, 'unsupported_media_type');
    }
  });
  it('400 for a bad binary upload (truncated .npy, missing key, bad metadata header)', async () => {
    const npy = npyFile('<f8', [100], f64(100));
    await expectRejected(
      await c.call('POST', '/v1/put?key=x', { body: npy.subarray(0, 300), headers: { 'content-type': 'application/x-npy' } }),
      400,
      'invalid_request',
    );
    await expectRejected(
      await c.call('POST', '/v1/put', { body: npy, headers: { 'content-type': 'application/x-npy' } }),
      400,
      'invalid_request',
    );
    await expectRejected(
      await c.call('POST', '/v1/put?key=x', { body: npy, headers: { 'content-type': 'application/x-npy', 'X-Ttstore-Metadata': '[1]' } }),
      400,
      'invalid_request',
    );
    await expectRejected(
      await c.call('POST', '/v1/put?key=x&tolerance=abc', { body: npy, headers: { 'content-type': 'application/x-npy' } }),
      400,
      'invalid_request',
    );
  });
  it('checks in CONTRACT.md order: 401 before validation, validation (400) before the ACL (403)', async () => {
    const anon = await http(server.url, 'POST', '/v1/put', { json: { key: 'x', data_b64: '!!' } });
    expect(anon.status).to.equal(401);
    expect(anon.body.code).to.equal('missing_api_key');
    const invalid = await c.put({ key: 'x', namespace: 'forbidden', data_b64: '!!' });
    expect(invalid.status).to.equal(400);
    const forbidden = await c.put({ key: 'x', namespace: 'forbidden', data_b64: good });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.code).to.equal('namespace_forbidden');
    expect((await c.call('GET', '/v1/get/forbidden/x')).status).to.equal(403);
    expect((await c.call('GET', '/v1/list/forbidden')).status).to.equal(403);
    expect((await c.call('DELETE', '/v1/delete/forbidden/x')).status).to.equal(403);
    expect((await c.serve({ key: 'x', namespace: 'forbidden' })).status).to.equal(403);
  });
  it('answers routes and methods before authentication: 404 and 405', async () => {
    const r = await http(server.url, 'GET', '/v1/put');
    expect(r.status).to.equal(405);
    expect(r.headers.get('allow')).to.include('POST');
    expect((await http(server.url, 'GET', '/v1/nothing')).status).to.equal(404);
    expect((await c.call('GET', '/v1/get/default/missing')).body.code).to.equal('not_found');
  });

  it('answers damaged stored data with 500 data_corrupted, never wrong data', async () => {
    const before = new Set(await blobFiles(server.dataDir));
    const put = await c.put({ key: 'fragile', namespace: 'ns2', data_b64: Buffer.from('precious bytes').toString('base64') });
    expect(put.status).to.equal(200);
    const [file] = (await blobFiles(server.dataDir)).filter((f) => !before.has(f));
    const bytes = await readFile(file!);
    bytes[bytes.length - 1] ^= 0x01;
    await writeFile(file!, bytes);
    const r = await c.serve({ key: 'fragile', namespace: 'ns2' });
    expect(r.status).to.equal(500);
    expect(r.body.code).to.equal('data_corrupted');
    expect(r.text).to.not.include(server.dataDir);
    expect((await c.call('GET', '/v1/get/ns2/fragile')).status).to.equal(200);
  });
});
