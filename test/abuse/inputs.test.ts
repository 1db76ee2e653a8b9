// The attacks of issue #19 on request bodies and input bounds (CONTRACT.md section 8, "Request
// bodies" and the search limit): each is answered at once with its 4xx problem, without reading
// what it need not read, while another tenant's small requests stay fast, the server's memory stays
// flat, and the attacker's books (entries, CU) stay as they were.
import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { encodeNpy } from '../../src/codec/npy.js';
import {
  BODY_MAX_DEPTH,
  JSON_MAX_DEPTH,
  MAX_HEADER_BYTES,
  METADATA_MAX_KEYS,
  MiB,
  NPY_MAX_HEADER_BYTES,
  payloadBodyBytes,
} from '../../src/limits/input.js';
import { http, type TestServer } from '../helpers/server.js';
import { rawRequest, type RawReply } from '../helpers/raw-http.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { npyFile, f64, NPY_MAX_ELEMENTS } from '../storage/npy-fixtures.js';
import { arena, booksOf, underAttack, VICTIM_WORST_MS, type AttackOutcome } from './harness.js';

/** An early answer: well inside the victim's bound, on a 2-core host that runs the client too. */
const ANSWER_MS = 1000;
/** Growth of the server's resident memory that the victim's own traffic can explain. */
const FLAT_MEMORY = 96 * MiB;

/** `{"a": {"a": ... 1 ...}}`, `depth` objects deep. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** An .npy v2 header prefix declaring a header of `headerBytes`, and its first bytes of text. */
function npyHead(headerBytes: number, text: string): Buffer {
  const head = Buffer.alloc(12);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0]).copy(head, 0);
  head.writeUInt32LE(headerBytes, 8);
  return Buffer.concat([head, Buffer.from(text, 'latin1')]);
}

describe('abuse: request bodies and input bounds', function () {
  this.timeout(60000);
  let server: TestServer;
  let victim: CreatedTenant;
  let attacker: CreatedTenant;
  let asAttacker: Record<string, string>;

  before(async () => {
    ({ server, victim, attacker } = await arena());
    asAttacker = tenantHeaders(attacker);
  });
  after(async () => {
    await server.destroy();
  });

  /** Runs `attack` against the victim's loop; the victim stays fast and the attacker's books unchanged. */
  async function refused<T>(attack: () => Promise<T>): Promise<AttackOutcome<T>> {
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, attack);
    expect(out.victim.failures, 'victim requests that failed').to.deep.equal([]);
    expect(out.victim.worstMs, 'victim worst latency, ms').to.be.below(VICTIM_WORST_MS);
    expect(await booksOf(server, attacker), 'attacker books').to.deep.equal(before);
    return out;
  }

  function expectAnswer(out: AttackOutcome<RawReply>, status: number, code: string): void {
    expect(out.result.status, out.result.text.slice(0, 300)).to.equal(status);
    expect(out.result.headers['content-type']).to.match(/^application\/problem\+json/);
    expect(out.result.body.code).to.equal(code);
    expect(out.result.text.length, 'the problem quotes no more than a short piece of the input').to.be.below(1024);
    expect(out.result.ms, 'attacker answer time, ms').to.be.below(ANSWER_MS);
  }

  it('a 300 MB body declared to serve is 413 from its Content-Length: answered at once, never read, the connection closed', async () => {
    const out = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/serve',
        headers: { ...asAttacker, 'Content-Type': 'application/json' },
        body: Buffer.from('{"key": "victim", "pad": "'),
        declaredLength: 300_000_000,
        trickle: { bytes: 256 << 10, everyMs: 5 },
      }),
    );
    expectAnswer(out, 413, 'payload_too_large');
    expect(await out.result.closed, 'the server closes instead of reading the rest').to.equal(true);
    expect(out.memory.growthBytes).to.be.below(FLAT_MEMORY);
  });

  it('a body declared past the put limit is 413 before reading; so is a chunked serve body once past 1 MiB', async () => {
    const put = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put',
        headers: { ...asAttacker, 'Content-Type': 'application/json' },
        body: Buffer.from('{"key": "x", "data_b64": "'),
        declaredLength: payloadBodyBytes(NPY_MAX_ELEMENTS) + 1,
        trickle: { bytes: 256 << 10, everyMs: 5 },
      }),
    );
    expectAnswer(put, 413, 'payload_too_large');
    expect(await put.result.closed).to.equal(true);
    const chunked = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/serve',
        headers: { ...asAttacker, 'Content-Type': 'application/json' },
        body: Buffer.from('{"key": "victim", "pad": "'),
        chunked: true,
        trickle: { bytes: 64 << 10, everyMs: 2 },
      }),
    );
    expectAnswer(chunked, 413, 'payload_too_large');
    expect(chunked.result.sentBytes, 'read up to the limit, not beyond').to.be.below(8 * MiB);
    expect(await chunked.result.closed).to.equal(true);
    expect(Math.max(put.memory.growthBytes, chunked.memory.growthBytes)).to.be.below(FLAT_MEMORY);
  });

  it('61 KB of gzip that inflates to 63 MB is 415 before a byte of it is read', async () => {
    const inflated = Buffer.concat([Buffer.from('{"key": "victim", "pad": "'), Buffer.alloc(63 * MiB, 0x61), Buffer.from('"}')]);
    const gz = gzipSync(inflated, { level: 9 });
    expect(gz.length).to.be.below(128 << 10);
    for (const path of ['/v1/serve', '/v1/put', '/v1/query/search']) {
      const out = await refused(() =>
        rawRequest(server.url, {
          method: 'POST',
          path,
          headers: { ...asAttacker, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
          body: gz,
        }),
      );
      expectAnswer(out, 415, 'unsupported_media_type');
      expect(out.result.body.detail).to.match(/Content-Encoding/);
      expect(out.memory.growthBytes).to.be.below(FLAT_MEMORY);
    }
  });

  it('an .npy header declaring a 64 MiB descr is 400 from its first 12 bytes, with a short message', async () => {
    const descr = 64 * MiB;
    const out = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put?key=evil',
        headers: { ...asAttacker, 'Content-Type': 'application/x-npy' },
        body: npyHead(descr, `{'descr': '<f8${'x'.repeat(60000)}`),
        declaredLength: 12 + descr + 8,
        trickle: { bytes: 256 << 10, everyMs: 5 },
      }),
    );
    expectAnswer(out, 400, 'invalid_request');
    expect(out.result.body.detail).to.match(/at most 64 KiB/);
    expect(out.memory.growthBytes).to.be.below(FLAT_MEMORY);
  });

  it('an .npy header over 64 KiB in a JSON put is 400 with a short message, from its length field', async () => {
    // (A JSON put carrying the whole 64 MiB descr is read and parsed as any 85 MB JSON body is: its
    // cost is the JSON form's, not the header's; the binary form above refuses it at 12 bytes.)
    const long = npyFile(`<f8${'x'.repeat(NPY_MAX_HEADER_BYTES)}`, [1], f64([1]), { version: 2 });
    const out = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put',
        headers: { ...asAttacker, 'Content-Type': 'application/json' },
        body: Buffer.from(JSON.stringify({ key: 'evil', data_b64: long.toString('base64') })),
      }),
    );
    expectAnswer(out, 400, 'invalid_request');
    expect(out.result.body.detail).to.match(/at most 64 KiB/);
    expect(out.memory.growthBytes).to.be.below(FLAT_MEMORY);
  });

  it('an .npy header nested 5000 deep is a 400, not a stack overflow, in either put form', async () => {
    const deep = npyFile('', [1], f64([1]), {
      version: 2,
      headerText: `{'descr': ${'['.repeat(5000)}${']'.repeat(5000)}, 'fortran_order': False, 'shape': (1,), }`,
    });
    const binary = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put?key=evil',
        headers: { ...asAttacker, 'Content-Type': 'application/x-npy' },
        body: deep,
      }),
    );
    expectAnswer(binary, 400, 'invalid_request');
    const json = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put',
        headers: { ...asAttacker, 'Content-Type': 'application/json' },
        body: Buffer.from(JSON.stringify({ key: 'evil', data_b64: deep.toString('base64') })),
      }),
    );
    expectAnswer(json, 400, 'invalid_request');
  });

  it('80,000 top-level metadata names are a 400 before any write: the single writer is never held', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`k${i}`, 0])); // 0.9 MB: within the old 1 MiB metadata limit
    const data = encodeNpy('float64', [4], f64([1, 2, 3, 4])).toString('base64');
    for (const [path, body] of [
      ['/v1/put', { key: 'evil', data_b64: data, metadata }],
      [
        '/v1/put_cores',
        { key: 'evil', cores: [{ data_b64: encodeNpy('float32', [1, 2, 1], Buffer.alloc(8)).toString('base64') }], metadata },
      ],
    ] as const) {
      const out = await refused(() =>
        rawRequest(server.url, {
          method: 'POST',
          path,
          headers: { ...asAttacker, 'Content-Type': 'application/json' },
          body: Buffer.from(JSON.stringify(body)),
        }),
      );
      expectAnswer(out, 400, 'invalid_request');
      expect(out.result.body.detail).to.equal(`metadata has 80000 keys; at most ${METADATA_MAX_KEYS} are allowed`);
    }
  });

  it('metadata and filters nested 10,000 deep are a 400, and so is one level past 32, in every route that takes them', async () => {
    const data = encodeNpy('float64', [4], f64([1, 2, 3, 4])).toString('base64');
    const body = (path: string, deep: string): string =>
      path === '/v1/put' ? `{"key": "evil", "data_b64": "${data}", "metadata": ${deep}}` : `{"filters": {"a": ${deep}}}`;
    for (const path of ['/v1/put', '/v1/query/search']) {
      const out = await refused(() =>
        rawRequest(server.url, {
          method: 'POST',
          path,
          headers: { ...asAttacker, 'Content-Type': 'application/json' },
          body: Buffer.from(body(path, nested(10_000))),
        }),
      );
      expectAnswer(out, 400, 'invalid_request');
      expect(out.result.body.detail).to.match(new RegExp(`nests deeper than ${BODY_MAX_DEPTH} levels`));
    }
    const put33 = await http(server.url, 'POST', '/v1/put', {
      body: body('/v1/put', nested(JSON_MAX_DEPTH + 1)),
      headers: { ...asAttacker, 'content-type': 'application/json' },
    });
    expect(put33.status, put33.text).to.equal(400);
    expect(put33.body).to.include({
      field: 'metadata',
      detail: `metadata nests deeper than ${JSON_MAX_DEPTH} levels of objects and arrays`,
    });
    const search33 = await http(server.url, 'POST', '/v1/query/search', {
      body: body('search', nested(JSON_MAX_DEPTH)),
      headers: { ...asAttacker, 'content-type': 'application/json' },
    });
    expect(search33.status, search33.text).to.equal(400);
    expect(search33.body.field).to.equal('filters');
    const header = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put?key=evil',
        body: Buffer.from('abc'),
        headers: { ...asAttacker, 'Content-Type': 'application/octet-stream', 'X-Ttstore-Metadata': nested(2000) },
      }),
    );
    expectAnswer(header, 400, 'invalid_request');
    expect(header.result.body.detail).to.match(/X-Ttstore-Metadata nests deeper than 32/);
  });

  it('an X-Ttstore-Metadata over the 16 KiB header limit is 431 as a problem; under it, its 256-name limit holds', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(MAX_HEADER_BYTES) });
    const out = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put?key=evil',
        body: Buffer.from('abc'),
        headers: { ...asAttacker, 'Content-Type': 'application/octet-stream', 'X-Ttstore-Metadata': big },
      }),
    );
    expectAnswer(out, 431, 'request_header_fields_too_large');
    expect(await out.result.closed).to.equal(true);
    const names = JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`n${i}`, 0])));
    expect(names.length).to.be.below(MAX_HEADER_BYTES - 1024);
    const many = await refused(() =>
      rawRequest(server.url, {
        method: 'POST',
        path: '/v1/put?key=evil',
        body: Buffer.from('abc'),
        headers: { ...asAttacker, 'Content-Type': 'application/octet-stream', 'X-Ttstore-Metadata': names },
      }),
    );
    expectAnswer(many, 400, 'invalid_request');
    expect(many.result.body.detail).to.equal(`X-Ttstore-Metadata has 300 keys; at most ${METADATA_MAX_KEYS} are allowed`);
  });

  it('a search over thousands of matches answers one page: limit, count and total', async () => {
    const core = encodeNpy('float32', [1, 2, 1], Buffer.from(new Float32Array([1, 2]).buffer)).toString('base64');
    for (let b = 0; b < 2; b++) {
      const entries = Array.from({ length: 1000 }, (_, i) => ({
        key: `m${b}-${String(i).padStart(4, '0')}`,
        cores: [{ data_b64: core }],
        metadata: { tag: 'same', i },
      }));
      const r = await http(server.url, 'POST', '/v1/put_cores_batch', { json: { entries }, headers: asAttacker });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
    }
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, () =>
      http(server.url, 'POST', '/v1/query/search', {
        json: { filters: { tag: 'same' }, limit: 10, offset: 1990 },
        headers: asAttacker,
      }),
    );
    expect(out.result.status, out.result.text.slice(0, 300)).to.equal(200);
    expect(out.result.body).to.include({ count: 10, total: 2000 });
    expect(out.result.body.results.map((r: { key: string }) => r.key)).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => `m1-0${990 + i}`),
    );
    expect(out.answerMs).to.be.below(ANSWER_MS);
    expect(out.victim.worstMs).to.be.below(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.below(FLAT_MEMORY);
    const after = await booksOf(server, attacker);
    expect(after.keys).to.deep.equal(before.keys);
    expect(after.cusUsed - before.cusUsed, 'the search alone is charged').to.be.closeTo(0.5, 1e-9);
  });
});
