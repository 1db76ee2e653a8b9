// CONTRACT.md section 8: a JSON body, however large and however built, is read as it arrives
// (codec/json-reader.ts) in short stretches of work, so another tenant's small requests stay fast
// while it is read, parsed and decoded; and the byte budget holds for it what it really builds (its
// length, and more for each byte of structure), so a large put is not refused for copies it no longer
// makes, and a body of dense structure is refused in its middle once it would hold more than its
// tenant may.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { MiB } from '../../src/limits/input.js';
import { JSON_STRUCTURE_HOLD } from '../../src/http/admission.js';
import { rawRequest, type RawReply } from '../helpers/raw-http.js';
import type { TestServer } from '../helpers/server.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { booksOf, scene, underAttack, VICTIM_WORST_MS, worstBatchEntries } from './harness.js';

/** A JSON request on its own connection, its body encoded before the clock starts. */
function postJson(server: TestServer, path: string, body: Buffer, who: CreatedTenant, timeoutMs = 60_000): Promise<RawReply> {
  return rawRequest(server.url, {
    method: 'POST',
    path,
    body,
    timeoutMs,
    headers: { ...tenantHeaders(who), 'Content-Type': 'application/json', Connection: 'close' },
  });
}

/** A JSON request sent chunked (no Content-Length), in pieces of 1 MiB. */
function postChunked(
  server: TestServer,
  path: string,
  body: Buffer,
  who: CreatedTenant,
): Promise<{ status: number; body: any; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      server.url + path,
      {
        method: 'POST',
        agent: false,
        headers: { ...tenantHeaders(who), 'Content-Type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, text, body: JSON.parse(text) });
        });
        res.once('error', reject);
      },
    );
    // A server that answers before the whole body is sent may close under the rest: its answer counts.
    req.once('error', (err) => (err.message.includes('EPIPE') || err.message.includes('ECONNRESET') ? undefined : reject(err)));
    for (let at = 0; at < body.length; at += MiB) req.write(body.subarray(at, at + MiB));
    req.end();
  });
}

/** Random bytes that are not an .npy file (stored as a blob: no engine work, only the body's). */
function blobBytes(n: number): Buffer {
  const b = randomBytes(n);
  b[0] = 0x42;
  return b;
}

describe('abuse: JSON bodies read as they arrive', function () {
  this.timeout(120_000);

  describe('on the default limits', () => {
    const at = scene();

    // Refused for a field after its data, so the whole body is read and decoded and nothing else runs
    // (a stored put adds the engine's work on the payload, which engine turns bound).
    it('a JSON put of 48 MiB of data (64 MiB of base64) is read and decoded while the victim stays in bound; a bad domain after its data is a 400, nothing stored, no CU', async () => {
      const body = Buffer.from(JSON.stringify({ key: 'large', data_b64: blobBytes(48 * MiB).toString('base64'), domain: 'nowhere' }));
      const before = await booksOf(at.server, at.attacker);
      const out = await underAttack(at.server, at.victim, () => postJson(at.server, '/v1/put', body, at.attacker));
      expect(out.result.status, out.result.text.slice(0, 300)).to.equal(400);
      expect(out.result.body.detail).to.match(/domain/);
      expect(out.victim.failures).to.deep.equal([]);
      expect(out.victim.worstMs, `victim median ${out.victim.medianMs.toFixed(1)} ms`).to.be.below(VICTIM_WORST_MS);
      // The decoded bytes and a few pieces of text; never the base64 as a string.
      expect(out.memory.growthBytes, 'server memory growth').to.be.below(128 * MiB);
      expect(await booksOf(at.server, at.attacker)).to.deep.equal(before);
    });

    it('the worst legal put_cores_batch body (1000 entries of 256 metadata names, 63 MB) is parsed while the victim stays in bound; a bad core in its last entry is a 400, nothing stored, no CU', async () => {
      const entries = worstBatchEntries();
      entries[999]!.cores[0]!.data_b64 = Buffer.from('not an npy file').toString('base64');
      const body = Buffer.from(JSON.stringify({ entries }));
      expect(body.length).to.be.above(60e6);
      const before = await booksOf(at.server, at.attacker);
      const out = await underAttack(at.server, at.victim, () => postJson(at.server, '/v1/put_cores_batch', body, at.attacker));
      expect(out.result.status, out.result.text.slice(0, 300)).to.equal(400);
      expect(out.result.body.detail).to.match(/entries\[999\]/);
      expect(out.victim.failures).to.deep.equal([]);
      expect(out.victim.worstMs, `victim median ${out.victim.medianMs.toFixed(1)} ms`).to.be.below(VICTIM_WORST_MS);
      expect(out.memory.growthBytes, 'server memory growth').to.be.below(384 * MiB);
      expect(await booksOf(at.server, at.attacker)).to.deep.equal(before);
    });
  });

  describe('with SVC_GATE_MAX_INFLIGHT_BYTES of 48 MiB (24 MiB per tenant)', () => {
    const BUDGET = 48 * MiB;
    const at = scene({ SVC_GATE_MAX_INFLIGHT_BYTES: String(BUDGET) });

    it("a 21 MiB JSON put holds about its length, not a copy per form of its data: it fits a tenant's 24 MiB", async () => {
      const body = Buffer.from(JSON.stringify({ key: 'fits', data_b64: blobBytes(15 * MiB).toString('base64') }));
      expect(body.length)
        .to.be.above(20 * MiB)
        .and.below(BUDGET / 2);
      const put = await postJson(at.server, '/v1/put', body, at.attacker);
      expect(put.status, put.text.slice(0, 300)).to.equal(200);
    });

    it('a chunked JSON put (no Content-Length) grows its hold as it arrives: 21 MiB fits, 30 MiB is 503 overloaded in its middle, nothing stored', async () => {
      const send = (key: string, dataBytes: number) =>
        postChunked(
          at.server,
          '/v1/put',
          Buffer.from(JSON.stringify({ key, data_b64: blobBytes(dataBytes).toString('base64') })),
          at.attacker,
        );
      const fits = await send('chunked', 15 * MiB);
      expect(fits.status, fits.text.slice(0, 300)).to.equal(200);
      const before = await booksOf(at.server, at.attacker);
      const over = await send('too-much', 22 * MiB);
      expect(over.status, over.text.slice(0, 300)).to.equal(503);
      expect(over.body.code).to.equal('overloaded');
      expect(await booksOf(at.server, at.attacker)).to.deep.equal(before);
    });

    it("a body of dense structure is 503 overloaded in its middle once what it builds passes the tenant's share: the rest unread, memory flat, books unchanged", async () => {
      // 1 MiB of empty objects would build about JSON_STRUCTURE_HOLD times that (32 MiB) before any
      // schema could refuse them.
      const junk = '{},'.repeat(MiB / 3);
      const body = Buffer.from(`{"key":"junk","metadata":{"x":[${junk}{}]},"data_b64":"AAAA"}`);
      expect(JSON_STRUCTURE_HOLD * body.length).to.be.above(BUDGET / 2);
      const before = await booksOf(at.server, at.attacker);
      const out = await underAttack(at.server, at.victim, () => postJson(at.server, '/v1/put', body, at.attacker));
      expect(out.result.status, out.result.text.slice(0, 300)).to.equal(503);
      expect(out.result.body.code).to.equal('overloaded');
      expect(out.result.ms, 'attacker answer time, ms').to.be.below(1500);
      expect(out.victim.failures).to.deep.equal([]);
      expect(out.victim.worstMs).to.be.below(VICTIM_WORST_MS);
      expect(out.memory.growthBytes, 'server memory growth').to.be.below(64 * MiB);
      expect(await booksOf(at.server, at.attacker)).to.deep.equal(before);
    });
  });
});
