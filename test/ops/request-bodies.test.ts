// Request bodies (CONTRACT.md section 8): every route's limit comes from its endpoint description
// (src/limits/input.ts) and is answered from Content-Length before the body is read; a
// Content-Encoding other than identity is 415 before reading; header lines past 16 KiB are a 431
// problem; and a body the server answers without reading is dropped, or the connection closed.
import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { ENDPOINTS } from '../../src/routes/index.js';
import type { Endpoint } from '../../src/http/endpoint.js';
import { SPECS } from '../../src/config.js';
import { JSON_BODY_BYTES, jsonBodyBytes, MAX_HEADER_BYTES, payloadBodyBytes, UNREAD_BODY_DRAIN_BYTES } from '../../src/limits/input.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { rawRequest } from '../helpers/raw-http.js';
import { adminHeaders, createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

const MAX_PAYLOAD = Number(SPECS.maxPayloadBytes.defaultText);
const WITH_BODY = ENDPOINTS.filter((ep) => ep.body?.json);

/** A concrete path for a template (a path parameter becomes `x`). */
const pathOf = (ep: Endpoint): string => ep.path.replace(/\{[^}]+\}/g, 'x');

describe('request bodies: limits per route, encodings, header size', function () {
  this.timeout(60000);
  let server: TestServer;
  let t: CreatedTenant;
  const authFor = (ep: Endpoint) => (ep.auth === 'admin' ? adminHeaders(server) : ep.auth === 'tenant' ? tenantHeaders(t) : {});

  before(async () => {
    server = await startServer();
    t = await createTenant(server);
  });
  after(async () => {
    await server.destroy();
  });

  it('every route with a JSON body takes one of the two limits: 1 MiB, or the largest payload in base64 plus 1 MiB', () => {
    const payload = ['put', 'put_cores', 'put_cores_batch', 'topk_vector'];
    expect(
      WITH_BODY.filter((ep) => ep.body!.limit === 'payload')
        .map((ep) => ep.id)
        .sort(),
    ).to.deep.equal([...payload].sort());
    expect(WITH_BODY.filter((ep) => ep.body!.limit === 'small').length).to.be.at.least(10);
    expect(jsonBodyBytes('small', MAX_PAYLOAD)).to.equal(1 << 20);
    // 256 MiB and a 64 KiB .npy header in base64, plus 1 MiB
    expect(payloadBodyBytes(MAX_PAYLOAD)).to.equal(Math.ceil((MAX_PAYLOAD + 65536) / 3) * 4 + (1 << 20));
  });

  it('one byte over its limit, declared, is 413 on every route before a byte of the body is read', async () => {
    for (const ep of WITH_BODY) {
      const limit = jsonBodyBytes(ep.body!.limit, MAX_PAYLOAD);
      const r = await rawRequest(server.url, {
        method: ep.method.toUpperCase(),
        path: pathOf(ep),
        headers: { ...authFor(ep), 'Content-Type': 'application/json' },
        body: Buffer.from('{"a": "'),
        declaredLength: limit + 1,
        closeWaitMs: 500,
      });
      expect(r.status, `${ep.id}: ${r.text}`).to.equal(413);
      expect(r.body.code).to.equal('payload_too_large');
      expect(r.body.detail, ep.id).to.include(`limit of ${limit} bytes`);
      // Past 16 MiB the connection closes rather than read the rest; below, the rest would be dropped as it came.
      expect(await r.closed, `${ep.id}: closed after the answer`).to.equal(limit + 1 > UNREAD_BODY_DRAIN_BYTES);
    }
  });

  it('a small body exactly at 1 MiB is read and judged on its content', async () => {
    const head = '{"key": "absent", "pad": "';
    const body = Buffer.from(head + 'x'.repeat(JSON_BODY_BYTES - head.length - 2) + '"}');
    expect(body.length).to.equal(JSON_BODY_BYTES);
    const r = await http(server.url, 'POST', '/v1/serve', { body, headers: { ...tenantHeaders(t), 'content-type': 'application/json' } });
    expect(r.status, r.text).to.equal(404);
    const over = await http(server.url, 'POST', '/v1/serve', {
      body: Buffer.concat([body, Buffer.from(' ')]),
      headers: { ...tenantHeaders(t), 'content-type': 'application/json' },
    });
    expect(over.status).to.equal(413);
  });

  it('a Content-Encoding other than identity is 415 on every route, after authentication, before reading', async () => {
    const gz = gzipSync(Buffer.from('{"key": "x"}'));
    for (const ep of ENDPOINTS) {
      for (const encoding of ['gzip', 'deflate', 'br', 'x-anything']) {
        const r = await rawRequest(server.url, {
          method: ep.method.toUpperCase(),
          path: pathOf(ep),
          body: gz,
          headers: { ...authFor(ep), 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        });
        expect(r.status, `${ep.id} ${encoding}: ${r.text}`).to.equal(415);
        expect(r.body).to.include({ code: 'unsupported_media_type' });
      }
    }
    const anon = await rawRequest(server.url, {
      method: 'POST',
      path: '/v1/serve',
      body: gz,
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
    });
    expect(anon.status, 'authentication comes first').to.equal(401);
    const identity = await rawRequest(server.url, {
      method: 'POST',
      path: '/v1/serve',
      body: Buffer.from('{"key": "absent"}'),
      headers: { ...tenantHeaders(t), 'Content-Type': 'application/json', 'Content-Encoding': 'identity' },
    });
    expect(identity.status).to.equal(404);
  });

  it('a chunked body is refused as soon as it passes its limit, and the connection closes', async () => {
    const r = await rawRequest(server.url, {
      method: 'POST',
      path: '/v1/query/search',
      headers: { ...tenantHeaders(t), 'Content-Type': 'application/json' },
      body: Buffer.from('{"filters": {}, "pad": "'),
      chunked: true,
      trickle: { bytes: 32 << 10, everyMs: 1 },
    });
    expect(r.status, r.text).to.equal(413);
    expect(r.sentBytes).to.be.below(4 * JSON_BODY_BYTES);
    expect(await r.closed).to.equal(true);
  });

  it('a refused body of at most 16 MiB is read to its end and dropped, so clients that write it all first get the answer', async () => {
    // fetch writes the whole body before it reads: it sees the 413 (not a broken pipe), and the connection is reused.
    const body = Buffer.alloc(4 << 20, 0x20);
    expect(body.length).to.be.below(UNREAD_BODY_DRAIN_BYTES);
    for (let i = 0; i < 3; i++) {
      const r = await http(server.url, 'POST', '/v1/serve', { body, headers: { ...tenantHeaders(t), 'content-type': 'application/json' } });
      expect(r.status).to.equal(413);
      expect(r.headers.get('connection')).to.not.equal('close');
    }
    const anon = await http(server.url, 'POST', '/v1/serve', { body, headers: { 'content-type': 'application/json' } });
    expect(anon.status).to.equal(401);
  });

  it('a client that goes on writing a refused body it will never finish reads the 4xx, not a reset', async () => {
    // The server ends its side after the answer and drops what still arrives for a while (a lingering
    // close): closed with those bytes unread, the connection would be reset under the writing client.
    for (let i = 0; i < 8; i++) {
      const r = await rawRequest(server.url, {
        method: 'POST',
        path: '/v1/serve',
        headers: { ...tenantHeaders(t), 'Content-Type': 'application/json' },
        body: Buffer.alloc(1 << 20, 0x20),
        declaredLength: 1 << 30,
        trickle: { bytes: 64 << 10, everyMs: 1 },
        busyAfterSendMs: 200,
      });
      expect(r.status, r.text).to.equal(413);
      expect(r.body.code).to.equal('payload_too_large');
      expect(await r.closed).to.equal(true);
    }
  });

  it('header lines over 16 KiB together are a 431 problem, and the connection closes', async () => {
    const r = await rawRequest(server.url, {
      method: 'GET',
      path: '/v1/list/default',
      headers: { ...tenantHeaders(t), 'X-Padding': 'p'.repeat(MAX_HEADER_BYTES) },
    });
    expect(r.status).to.equal(431);
    expect(r.headers['content-type']).to.equal('application/problem+json');
    expect(r.body).to.include({ status: 431, code: 'request_header_fields_too_large', type: '/problems/request_header_fields_too_large' });
    expect(await r.closed).to.equal(true);
    const under = await rawRequest(server.url, {
      method: 'GET',
      path: '/v1/list/default',
      headers: { ...tenantHeaders(t), 'X-Padding': 'p'.repeat(MAX_HEADER_BYTES - 1024) },
    });
    expect(under.status).to.equal(200);
    const malformed = await rawRequest(server.url, { method: 'GET', path: '/v1/list/default', headers: { 'Bad Header': 'x' } });
    expect(malformed.status).to.equal(400);
    expect(malformed.body).to.include({ code: 'invalid_request' });
  });

  it('the API reference gives each body its limit, from the same numbers', async () => {
    const doc = (await http(server.url, 'GET', '/openapi.json')).body;
    expect(doc.paths['/v1/serve'].post.requestBody.description).to.include('at most 1 MiB');
    const put = doc.paths['/v1/put'].post.requestBody.description;
    expect(put).to.include(`${payloadBodyBytes(MAX_PAYLOAD)} bytes`);
    expect(put).to.include('Content-Encoding other than identity: 415');
    expect(doc.info.description).to.include('16 KiB');
  });
});
