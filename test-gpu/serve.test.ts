// serve target gpu over HTTP on a CUDA server: the contract's response, resident_before, eviction
// under a small SVC_GATE_GPU_CACHE_BYTES, a device index out of range, health, and top-K results
// unchanged once the candidates' cores are resident.
import { expect } from 'chai';
import { decodeNpy, encodeNpy } from '../src/codec/npy.js';
import { http, startServer, type TestServer } from '../test/helpers/server.js';
import { createTenant } from '../test/helpers/tenants.js';
import { gpuAvailability, requireGpu, smoothField } from './helpers.js';

describe('serve target gpu over HTTP', function () {
  let server: TestServer;
  let auth: Record<string, string>;
  let coreBytes = 0;

  const put = (key: string, freq: number) => {
    const x = Float32Array.from(smoothField(1 << 16, freq));
    const npy = encodeNpy('float32', [1 << 16], new Uint8Array(x.buffer));
    return http(server.url, 'POST', '/v1/put', { json: { key, data_b64: npy.toString('base64'), tolerance: 1e-4 }, headers: auth });
  };
  const serve = (key: string, device?: string) =>
    http(server.url, 'POST', '/v1/serve', { json: { key, target: 'gpu', ...(device ? { device } : {}) }, headers: auth });

  before(async function () {
    requireGpu(this);
    this.timeout(60000);
    server = await startServer({
      env: { SVC_GATE_ENGINE_BACKEND: 'cuda', SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '1000000', SVC_GATE_GPU_CACHE_BYTES: String(1 << 30) },
    });
    const t = await createTenant(server);
    auth = { 'X-Api-Key': t.api_key };
  });
  after(async () => server?.destroy());

  it('health reports the cuda backend and the devices', async () => {
    const h = await http(server.url, 'GET', '/gate/health');
    expect(h.body.engine.backend).to.equal('cuda');
    expect(h.body.engine.cuda_devices).to.equal(gpuAvailability().devices);
  });

  it('places the cores and answers as the contract says; a second serve finds them resident', async () => {
    expect((await put('a', 10)).status).to.equal(200);
    const r = await serve('a');
    expect(r.status, r.text).to.equal(200);
    expect(r.body).to.include({
      key: 'a',
      namespace: 'default',
      version: 1,
      target: 'gpu',
      device: 'cuda:0',
      placed: true,
      resident_before: false,
    });
    expect(r.body.gpu_core_bytes).to.be.a('number').above(0);
    expect(r.body.n_cores).to.equal(16);
    expect(r.body.ranks).to.have.length(17);
    coreBytes = r.body.gpu_core_bytes;
    const again = await serve('a', 'cuda:0');
    expect(again.body.resident_before).to.equal(true);
    expect(again.body.gpu_core_bytes).to.equal(coreBytes);
  });

  it('answers 400 for a device index the server does not have', async () => {
    const n = gpuAvailability().devices;
    const r = await serve('a', `cuda:${n}`);
    expect(r.status).to.equal(400);
    expect(r.body.code).to.equal('invalid_request');
    expect(r.body.detail).to.match(new RegExp(`cuda:${n} does not exist`));
    expect((await serve('a', 'gpu:0')).status).to.equal(400);
  });

  it('top-K gives the same results once the candidates are resident', async function () {
    this.timeout(120000);
    // Frequencies 5.5, 6.5, ...: no field equals 'a' (frequency 10), whose equal score would make the
    // order of the two a matter of rounding.
    for (let j = 0; j < 20; j++) expect((await put(`k${j}`, 5.5 + j)).status).to.equal(200);
    const q = { query_key: 'k3', k: 5, metric: 'cosine' };
    const before = await http(server.url, 'POST', '/v1/query/topk', { json: q, headers: auth });
    expect(before.status, before.text).to.equal(200);
    for (let j = 0; j < 20; j++) expect((await serve(`k${j}`)).status).to.equal(200);
    const after = await http(server.url, 'POST', '/v1/query/topk', { json: q, headers: auth });
    expect(after.body.n_candidates).to.equal(before.body.n_candidates);
    expect(after.body.results.map((r: [string, number]) => r[0])).to.deep.equal(before.body.results.map((r: [string, number]) => r[0]));
    after.body.results.forEach((r: [string, number], i: number) => expect(Math.abs(r[1] - before.body.results[i][1])).to.be.at.most(1e-9));
  });
  it('reads a region, a coarse level and points of a compressed entry with the CUDA backend, as slicing the whole array', async () => {
    const n = 256;
    const x = smoothField(n * n, 12);
    const npy = encodeNpy('float64', [n, n], new Uint8Array(x.buffer));
    const p = await http(server.url, 'POST', '/v1/put', {
      json: { key: 'plane', data_b64: npy.toString('base64'), tolerance: 1e-8 },
      headers: auth,
    });
    expect(p.status, p.text).to.equal(200);
    const values = async (body: Record<string, unknown>) => {
      const r = await http(server.url, 'POST', '/v1/serve', { json: { key: 'plane', ...body }, headers: auth });
      expect(r.status, r.text).to.equal(200);
      const a = await decodeNpy(Buffer.from(r.body.data_b64 as string, 'base64'), 2 ** 30);
      return new Float64Array(Uint8Array.from(a.data).buffer); // a copy: the npy payload need not be 8-byte aligned
    };
    const full = await values({});
    const close = (got: Float64Array, want: (i: number) => number, what: string) => {
      for (let i = 0; i < got.length; i++)
        expect(Math.abs(got[i]! - want(i)), `${what} ${i}`).to.be.at.most(1e-9 * Math.max(1, Math.abs(want(i))));
    };
    // The region and the level stay on the CPU core (the backend sends only lists of points to the
    // device); 5000 points are at least its smallest list.
    close(await values({ region: [null, [null, null, -1]] }), (i) => full[Math.floor(i / n) * n + (n - 1 - (i % n))]!, 'region');
    const coarse = await values({ level: 1 });
    close(
      coarse,
      (i) => {
        const [r, c] = [2 * Math.floor(i / (n / 2)), 2 * (i % (n / 2))];
        return (full[r * n + c]! + full[r * n + c + 1]! + full[(r + 1) * n + c]! + full[(r + 1) * n + c + 1]!) / 4;
      },
      'level 1',
    );
    const points = Array.from({ length: 5000 }, (_, i) => [(i * 37) % n, (i * 101) % n]);
    close(await values({ points }), (i) => full[points[i]![0]! * n + points[i]![1]!]!, 'points');
  });

  it('evicts the least recently used entry under a small budget', async function () {
    this.timeout(120000);
    await server.destroy();
    server = await startServer({
      env: {
        SVC_GATE_ENGINE_BACKEND: 'cuda',
        SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '1000000',
        SVC_GATE_GPU_CACHE_BYTES: String(Math.floor(2.5 * coreBytes)),
      },
    });
    const t = await createTenant(server);
    auth = { 'X-Api-Key': t.api_key };
    for (const k of ['e1', 'e2', 'e3']) expect((await put(k, 10)).status).to.equal(200); // same field: same bytes
    expect((await serve('e1')).body.resident_before).to.equal(false);
    expect((await serve('e2')).body.resident_before).to.equal(false);
    expect((await serve('e1')).body.resident_before).to.equal(true); // e1 most recent; e2 is next out
    expect((await serve('e3')).body.resident_before).to.equal(false); // evicts e2
    expect((await serve('e1')).body.resident_before).to.equal(true);
    expect((await serve('e2')).body.resident_before).to.equal(false);
  });
});
