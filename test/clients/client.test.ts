// The TypeScript client against a real server: every operation through its typed method, arrays as
// binary .npy both ways, problems as typed errors, retries on 429 and 503, timeouts and aborts, and
// pagination as async iterators.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  ndarray,
  NotFoundError,
  TimeoutError,
  TtstoreClient,
  encodeNpy,
  type NdArray,
  type RetryEvent,
} from '../../clients/typescript/src/index.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { STORAGE_ENV } from '../storage/helpers.js';

/** Rejects with the error the promise rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

function f16(values: number[]): Uint16Array {
  // 1, 2, 0.5, -1 as IEEE half floats: exact, so a lossless put gives them back bit for bit.
  const bits: Record<number, number> = { 1: 0x3c00, 2: 0x4000, 0.5: 0x3800, [-1]: 0xbc00 };
  return Uint16Array.from(values, (v) => bits[v]);
}

const ARRAYS: Array<[string, NdArray]> = [
  [
    'float64 4x8',
    ndarray(
      Float64Array.from({ length: 32 }, (_, i) => Math.sin(i) * 1e3),
      [4, 8],
    ),
  ],
  ['float32 64', ndarray(Float32Array.from({ length: 64 }, (_, i) => i / 7))],
  ['float16 2x2', ndarray(f16([1, 2, 0.5, -1]), [2, 2], 'float16')],
  [
    'int64 3x5',
    ndarray(
      BigInt64Array.from({ length: 15 }, (_, i) => BigInt(i) * 10_000_000_000n - 7n),
      [3, 5],
    ),
  ],
  [
    'int32 3x5x7',
    ndarray(
      Int32Array.from({ length: 105 }, (_, i) => ((i * 7919) % 1000) - 500),
      [3, 5, 7],
    ),
  ],
  ['int16 10', ndarray(Int16Array.from({ length: 10 }, (_, i) => -i * 300))],
  [
    'uint8 16x16',
    ndarray(
      Uint8Array.from({ length: 256 }, (_, i) => i),
      [16, 16],
    ),
  ],
  [
    'uint16 1x1x8',
    ndarray(
      Uint16Array.from({ length: 8 }, (_, i) => 65535 - i),
      [1, 1, 8],
    ),
  ],
  ['bool 2x3', ndarray(Uint8Array.from([1, 0, 0, 1, 1, 0]), [2, 3], 'bool')],
  ['float64 scalar', ndarray(Float64Array.of(Math.PI), [])],
];

describe('clients: the TypeScript client', function () {
  this.timeout(60000);
  let server: TestServer;
  let operator: TtstoreClient;
  let c: TtstoreClient;
  let tenantId: string;
  let apiKey: string;

  before(async () => {
    server = await startServer({ env: STORAGE_ENV, timeoutMs: 60000 });
    operator = new TtstoreClient({ url: server.url, serviceKey: server.serviceKey });
    tenantId = `cli-${Date.now().toString(36)}`;
    const t = await operator.createTenant({
      tenant_id: tenantId,
      plan: 'enterprise',
      rate_limit: { requests: 100_000, window_s: 60 },
      monthly_quota: 1e9,
    });
    apiKey = t.api_key!;
    c = new TtstoreClient({ url: server.url, apiKey });
  });
  after(async () => {
    await server.destroy();
  });

  describe('storage', () => {
    for (const [name, a] of ARRAYS) {
      it(`puts and serves ${name} as binary .npy, bit for bit`, async () => {
        const key = `arr/${name}`;
        const put = await c.put(key, a, { domain: 'lossless', metadata: { name } });
        expect(put).to.include({ key, namespace: 'default', version: 1, kind: 'array', dtype: a.dtype });
        expect(put.shape).to.deep.equal(a.shape);
        const got = await c.serve(key);
        expect(got).to.include({ key, version: 1, kind: 'array', dtype: a.dtype, verdict: put.verdict });
        expect(got.array.dtype).to.equal(a.dtype);
        expect(got.array.shape).to.deep.equal(a.shape);
        expect(
          Buffer.from(got.array.data.buffer, got.array.data.byteOffset, got.array.data.byteLength).equals(Buffer.from(a.data.buffer)),
        ).to.equal(true);
      });
    }

    it('puts a blob as raw bytes and serves it back, with progress both ways', async () => {
      const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 31) & 0xff);
      const up: number[] = [];
      const down: Array<{ loaded: number; total: number | undefined }> = [];
      const put = await c.put('blob/one', bytes, { onUploadProgress: (p) => up.push(p.loaded) });
      expect(put).to.include({ kind: 'blob', dtype: 'uint8' });
      expect(up.length).to.be.above(1);
      expect(up.at(-1)).to.equal(bytes.length);
      const got = await c.serve('blob/one', { onDownloadProgress: (p) => down.push(p) });
      expect(got.kind).to.equal('blob');
      expect(Buffer.from(got.array.data as Uint8Array).equals(Buffer.from(bytes))).to.equal(true);
      expect(down.length).to.be.above(1);
      expect(down.at(-1)!.loaded).to.equal(down.at(-1)!.total).and.above(bytes.length);
    });

    it('gets metadata, versions, serves cores, stores them back, and deletes', async () => {
      // Smooth, of rank 1 and over the compression threshold: compressed at either tolerance, so it has cores.
      const a = ndarray(
        Float64Array.from({ length: 65536 }, (_, i) => Math.sin((i >> 8) / 40) * Math.exp(-(i & 255) / 120)),
        [256, 256],
      );
      await c.put('m/a', a, { metadata: { run: 7 } });
      const v2 = await c.put('m/a', a, { tolerance: 1e-3 });
      expect(v2.version).to.equal(2);
      const got = await c.get('m/a', { version: 1 });
      expect(got).to.include({ key: 'm/a', version: 1 });
      expect((got as { metadata?: unknown }).metadata).to.deep.equal({ run: 7 });
      const cores = await c.serveJson({ key: 'm/a', target: 'cores' });
      expect(cores.cores!.length).to.be.above(0);
      const back = await c.putCores({
        key: 'm/b',
        cores: cores.cores!.map((x) => ({ data_b64: x.data_b64! })),
        shape: a.shape,
        dtype: 'float64',
        layout: cores.layout,
      });
      expect(back).to.include({ key: 'm/b', version: 1 });
      const batch = await c.putCoresBatch({
        entries: [
          {
            key: 'm/c',
            cores: cores.cores!.map((x) => ({ data_b64: x.data_b64! })),
            shape: a.shape,
            dtype: 'float64',
            layout: cores.layout,
          },
        ],
      });
      expect(batch.count).to.equal(1);
      const del = await c.delete('m/a');
      expect(del).to.include({ key: 'm/a', deleted: true });
      expect(await rejection(c.get('m/a')))
        .to.be.instanceOf(NotFoundError)
        .and.include({ code: 'not_found', status: 404 });
    });

    it('lists 2,500 keys as an async iterator over pages', async () => {
      const core = Buffer.from(encodeNpy(ndarray(Float32Array.of(1, 2), [1, 2, 1]))).toString('base64');
      for (let b = 0; b < 3; b++) {
        const entries = Array.from({ length: b < 2 ? 1000 : 500 }, (_, i) => ({
          key: `page/${String(b * 1000 + i).padStart(4, '0')}`,
          cores: [{ data_b64: core }],
          shape: [2],
          metadata: { even: (b * 1000 + i) % 2 === 0 },
        }));
        await c.putCoresBatch({ namespace: 'default', entries });
      }
      const pages: number[] = [];
      const first = await c.list('default', { prefix: 'page/', limit: 1000 });
      expect(first).to.include({ count: 1000, total: 2500 });
      const keys: string[] = [];
      for await (const k of c.listAll('default', { prefix: 'page/', limit: 1000 })) keys.push(k.key!);
      expect(keys.length).to.equal(2500);
      expect(keys).to.deep.equal([...keys].sort());
      expect(new Set(keys).size).to.equal(2500);
      let evens = 0;
      for await (const r of c.searchAll({ filters: { even: true }, limit: 400 })) {
        pages.push(1);
        expect((r as { key?: string }).key).to.match(/^page\//);
        evens++;
      }
      expect(evens).to.equal(1250);
    });
  });

  describe('queries', () => {
    before(async () => {
      for (let i = 0; i < 4; i++) {
        await c.put(
          `q/${i}`,
          ndarray(
            Float64Array.from({ length: 64 }, (_, j) => Math.sin(j / (i + 1))),
            [64],
          ),
          { metadata: { group: i % 2 } },
        );
      }
    });

    it('similarity, topk, topk by a vector, and search', async () => {
      const s = await c.similarity({ key_a: 'q/0', key_b: 'q/0' });
      expect(s.score).to.be.closeTo(1, 1e-5);
      const top = await c.topk({ query_key: 'q/1', k: 2 });
      expect(top.results!.length).to.equal(2);
      expect(top.results!.map((r) => r[0])).to.not.include('q/1'); // the query itself is left out
      const vec = await c.topkVector({ vector: ndarray(Float64Array.from({ length: 64 }, (_, j) => Math.sin(j / 3))), k: 1 });
      expect(vec.results![0][0]).to.equal('q/2');
      const found = await c.search({ filters: { group: 1 } });
      expect(found.results!.map((r) => (r as { key?: string }).key).sort()).to.deep.equal(['q/1', 'q/3']);
    });
  });

  describe('simulations', () => {
    it('submits, waits with progress, lists, and refuses to cancel a finished job', async () => {
      const job = await c.submitSimulation({ solver: 'poisson_2d', output_key_prefix: 'sim/p', params: { n_bits: 9 } });
      expect(job.status).to.equal('queued');
      const seen: string[] = [];
      const done = await c.waitForSimulation(job.job_id!, { intervalMs: 50, onStatus: (s) => seen.push(s.status!) });
      expect(done.status).to.equal('completed');
      expect(done.outputs).to.have.members(['sim/p/u', 'sim/p/f']);
      expect(seen.at(-1)).to.equal('completed');
      expect((await c.simulationStatus(job.job_id!)).status).to.equal('completed');
      const list = await c.listSimulations({ status: 'completed' });
      expect(list.jobs!.map((j) => j.job_id)).to.include(job.job_id);
      const err = await rejection(c.cancelSimulation(job.job_id!));
      expect(err).to.be.instanceOf(ConflictError).and.include({ code: 'job_finished' });
      const u = await c.serve('sim/p/u');
      expect(u.array.shape).to.deep.equal([512, 512]);
    });
  });

  describe('operator and public endpoints', () => {
    it('onboards, lists, rotates, widens, re-tiers, reports usage and deactivates', async () => {
      const id = `op-${Date.now().toString(36)}`;
      const t = await operator.createTenant({ tenant_id: id, plan: 'starter' });
      expect(t.api_key).to.match(/^tts_/);
      expect((await operator.tenants()).tenants!.map((x) => x.tenant_id)).to.include(id);
      expect((await operator.addNamespace({ tenant_id: id, namespace: 'extra' })).namespaces).to.include('extra');
      const rotated = await operator.rotateKey({ tenant_id: id });
      expect(rotated.api_key).to.not.equal(t.api_key);
      expect((await operator.updateTier({ tenant_id: id, plan: 'builder' })).plan).to.equal('builder');
      expect((await operator.tenantUsage(tenantId)).cus_used).to.be.above(0);
      expect(await c.ownUsage()).to.deep.equal(await operator.tenantUsage(tenantId));
      expect((await c.namespaces()).namespaces!.map((n) => n.namespace)).to.include('default');
      expect((await operator.usage()).tenants).to.be.an('array');
      expect((await operator.reload()).reloaded).to.equal(true);
      expect(await operator.metrics()).to.match(/^# HELP/m);
      expect((await operator.deactivate({ tenant_id: id })).active).to.equal(false);
      const gone = new TtstoreClient({ url: server.url, apiKey: rotated.api_key });
      expect(await rejection(gone.list())).to.be.instanceOf(AuthenticationError);
    });

    it('health, root, the OpenAPI document and the docs page need no key', async () => {
      const anon = new TtstoreClient({ url: server.url });
      expect((await anon.health()).status).to.be.a('string');
      expect((await anon.root()).service).to.be.a('string');
      expect((await anon.openapi()).openapi).to.equal('3.1.0');
      expect(await anon.docs()).to.match(/<html/i);
    });
  });

  describe('errors', () => {
    it('maps problem codes to typed errors', async () => {
      const bad = new TtstoreClient({ url: server.url, apiKey: 'tts_not_a_real_key_0000000000000000000000000000' });
      expect(await rejection(bad.list()))
        .to.be.instanceOf(AuthenticationError)
        .and.include({ code: 'invalid_api_key', status: 401 });
      expect(await rejection(c.list('elsewhere')))
        .to.be.instanceOf(ForbiddenError)
        .and.include({ code: 'namespace_forbidden' });
      const invalid = (await rejection(c.put('x', ndarray(Float64Array.of(1, 2)), { tolerance: 2 }))) as ApiError;
      expect(invalid).to.be.instanceOf(BadRequestError).and.include({ code: 'invalid_request', status: 400 });
      expect(invalid.problem.field).to.be.a('string');
      expect(await rejection(c.simulationStatus('job_AAAAAAAAAAAAAAAA'))).to.be.instanceOf(NotFoundError);
      const notOperator = new TtstoreClient({ url: server.url, serviceKey: apiKey });
      expect(await rejection(notOperator.tenants()))
        .to.be.instanceOf(ForbiddenError)
        .and.include({ code: 'admin_only' });
    });

    it('a timeout is a TimeoutError; an abort rejects with the signal reason', async () => {
      const hang: Server = createServer(() => undefined);
      await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
      try {
        const slow = new TtstoreClient({ url, apiKey: 'k', timeoutMs: 100 });
        expect(await rejection(slow.health())).to.be.instanceOf(TimeoutError);
        const ac = new AbortController();
        const reason = new Error('stop');
        setTimeout(() => ac.abort(reason), 50);
        expect(await rejection(new TtstoreClient({ url }).health({ signal: ac.signal }))).to.equal(reason);
      } finally {
        hang.closeAllConnections();
        hang.close();
      }
    });
  });

  describe('retries', () => {
    it('retries 503 with backoff, then gives up after the policy allows', async () => {
      let hits = 0;
      const flaky: Server = createServer((req, res) => {
        hits++;
        const ok = hits > 2 && req.url !== '/gate/metrics';
        res.writeHead(ok ? 200 : 503, { 'content-type': ok ? 'application/json' : 'application/problem+json', 'retry-after': '0' });
        res.end(
          JSON.stringify(
            ok ? { status: 'ok' } : { type: '/problems/overloaded', title: 'Overloaded', status: 503, detail: 'busy', code: 'overloaded' },
          ),
        );
      });
      await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
      const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
      try {
        const events: RetryEvent[] = [];
        const r = new TtstoreClient({ url, retry: { baseMs: 10 }, onRetry: (e) => events.push(e) });
        expect((await r.health()).status).to.equal('ok');
        expect(events.map((e) => e.status)).to.deep.equal([503, 503]);
        const capped = new TtstoreClient({ url, serviceKey: 's', retry: { retries: 2, baseMs: 1 } });
        expect(await rejection(capped.metrics())).to.include({ code: 'overloaded', status: 503 });
      } finally {
        flaky.close();
      }
    });

    // A tenant limited to 3 requests per 2 s takes the same 429 rate_limited and Retry-After path as
    // a starter tenant's 10 per 60 s, in seconds rather than a minute.
    it('a rate-limited tenant still succeeds, each wait at least its Retry-After', async function () {
      this.timeout(30000);
      const t = await operator.createTenant({
        tenant_id: `rl-${Date.now().toString(36)}`,
        plan: 'enterprise',
        rate_limit: { requests: 3, window_s: 2 },
      });
      const events: RetryEvent[] = [];
      const limited = new TtstoreClient({ url: server.url, apiKey: t.api_key, onRetry: (e) => events.push(e) });
      const started = Date.now();
      for (let i = 0; i < 5; i++) await limited.list();
      expect(events.length).to.be.at.least(1);
      for (const e of events) {
        expect(e).to.include({ status: 429, code: 'rate_limited' });
        expect(e.retryAfterS).to.be.a('number');
        expect(e.waitMs).to.be.at.least(e.retryAfterS! * 1000);
      }
      expect(Date.now() - started).to.be.at.least(events[0].retryAfterS! * 1000);
    });
  });
});
