// The binary put bodies and the dense serve outputs live in reused buffers (src/runtime/buffer-pool.ts): what
// one request wrote there must never show through in another's answer or stored data.
import http from 'node:http';
import { expect } from 'chai';
import { decodeNpy } from '../../src/codec/npy.js';
import { bytesOf, npyOf, storageSuite } from './helpers.js';
import { NPY_MAX_ELEMENTS } from './npy-fixtures.js';

const encodeNpyOf = (a: Float64Array, n: number) => npyOf('float64', [n, n], a);

const N = 512; // 512 x 512 float64 = 2 MiB: above the pool's 1 MiB floor

function field(freq: number, n = N): Float64Array {
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i * n + j] = Math.sin((freq * i) / n) * Math.cos(((freq + 1) * j) / n) + freq;
  return out;
}

/** POST /v1/serve as x-npy, reading nothing past the headers until `resume` is called. */
function pausedServe(url: string, apiKey: string, key: string): Promise<{ resume(): Promise<Buffer> }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/serve`,
      {
        method: 'POST',
        headers: { 'X-Api-Key': apiKey, 'content-type': 'application/json', accept: 'application/x-npy' },
      },
      (res) => {
        res.pause();
        resolve({
          resume: () =>
            new Promise<Buffer>((done, fail) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => done(Buffer.concat(chunks)));
              res.on('error', fail);
              res.resume();
            }),
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ key }));
  });
}

function noise(seed: number): Float64Array {
  const out = new Float64Array(N * N);
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

describe('storage: reused request and response buffers', function () {
  this.timeout(120000);
  const s = storageSuite();

  const putBinary = async (key: string, a: Float64Array) => {
    const r = await s.c.call('POST', `/v1/put?key=${key}`, {
      body: npyOf('float64', [N, N], a),
      headers: { 'content-type': 'application/x-npy' },
    });
    expect(r.status, r.text).to.equal(200);
    return r.body;
  };

  it('stores each binary put bit-exact when puts of the same size follow one another and overlap', async () => {
    const arrays = [noise(1), noise(2), noise(3), noise(4)];
    // sequential (each body lands in the buffer the previous one gave back), then concurrent
    for (let i = 0; i < 2; i++) expect((await putBinary(`seq${i}`, arrays[i]!)).verdict).to.equal('passthrough');
    await Promise.all([putBinary('par2', arrays[2]!), putBinary('par3', arrays[3]!)]);
    for (const [key, a] of [
      ['seq0', arrays[0]],
      ['seq1', arrays[1]],
      ['par2', arrays[2]],
      ['par3', arrays[3]],
    ] as const) {
      expect((await s.c.dense(key)).data.equals(bytesOf(a)), key).to.equal(true);
    }
  });

  it('serves each compressed entry its own reconstruction when serves of the same size overlap', async () => {
    const keys = ['f1', 'f2', 'f3'];
    for (const [i, key] of keys.entries()) expect((await putBinary(key, field(i + 1))).compressed).to.equal(true);
    const alone = new Map<string, Buffer>();
    for (const key of keys) alone.set(key, (await s.c.dense(key)).data);
    expect(alone.get('f1')!.equals(alone.get('f2')!)).to.equal(false);
    for (let round = 0; round < 3; round++) {
      const got = await Promise.all([...keys, ...keys].map(async (key) => [key, (await s.c.dense(key)).data] as const));
      for (const [key, data] of got) expect(data.equals(alone.get(key)!), `${key} round ${round}`).to.equal(true);
    }
    // the JSON (base64) form gives its buffer back at once; the next x-npy answer is still right
    const json = await s.c.serve({ key: 'f2' });
    expect(json.status).to.equal(200);
    expect((await s.c.dense('f3')).data.equals(alone.get('f3')!)).to.equal(true);
  });

  it('keeps a served buffer until its reader has taken every byte, however slowly it reads', async () => {
    const M = 1024; // 8 MiB: more than the socket buffers hold, so most of it waits in the server
    const npy = (a: Float64Array) => encodeNpyOf(a, M);
    for (const [key, freq] of [
      ['slow-a', 1],
      ['slow-b', 2],
    ] as const) {
      const r = await s.c.call('POST', `/v1/put?key=${key}`, {
        body: npy(field(freq, M)),
        headers: { 'content-type': 'application/x-npy' },
      });
      expect(r.body.compressed, r.text).to.equal(true);
    }
    const want = (await s.c.dense('slow-a')).data;
    const slow = await pausedServe(s.server.url, s.c.apiKey, 'slow-a');
    // meanwhile other serves of the same size take buffers from the pool and write into them
    for (let i = 0; i < 3; i++) await s.c.dense('slow-b');
    const got = await decodeNpy(await slow.resume(), NPY_MAX_ELEMENTS);
    expect(got.data.equals(want)).to.equal(true);
  });
});
