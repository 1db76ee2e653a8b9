// npm run bench:partial — reading parts of an entry (serve's region, level, points) over HTTP against
// serving the whole dense array and slicing it in the client, measured in the same run:
//   1. a 2^24-element smooth float32 field (4096 x 4096): one row, one column, a 64 x 64 block, 10,000
//      random points and a level-4 coarse view, each served as application/x-npy, against the whole
//      array served and sliced here (bar: each selection >= 20x faster);
//   2. points in the engine alone, on the same field's train (bar: >= 1M values/s);
//   3. a 4096^3 float32 train put as its cores (256 GiB dense): a whole plane, a line, 1000 points and
//      a level-5 view over HTTP (bar: each < 1 s).
// Medians of TTS_BENCH_REPS (default 7) after one warm-up request each.
import http from 'node:http';
import { engine } from '../src/engine/index.js';
import { decodeNpy, encodeNpy } from '../src/codec/npy.js';
import { startServer } from '../test/helpers/server.js';
import { createTenant } from '../test/helpers/tenants.js';
import { CUBE_SHAPE, linearCubeCores } from '../test/helpers/linear-cube.js';
import { smoothField } from '../test/storage/helpers.js';

const N = 4096;
const REPS = Math.max(1, Number(process.env.TTS_BENCH_REPS ?? 7) || 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const agent = new http.Agent({ keepAlive: true });

function request(url: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const buf = typeof body === 'string' ? Buffer.from(body) : body;
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(buf.length) }, agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(buf);
  });
}

/** Median milliseconds of `run` over REPS, after one warm-up. */
async function timed(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const t0 = process.hrtime.bigint();
    await run();
    times.push(ms(t0));
  }
  return median(times);
}

async function main(): Promise<void> {
  const data = smoothField(N, Float32Array);
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const server = await startServer({ env: { SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '10000000' } });
  try {
    const t = await createTenant(server, { plan: 'enterprise', namespaces: ['default'] });
    const auth = { 'X-Api-Key': t.api_key };
    const json = { ...auth, 'content-type': 'application/json' };
    const npyAccept = { ...json, accept: 'application/x-npy' };
    const put = await request(
      `${server.url}/v1/put?key=field`,
      { ...auth, 'content-type': 'application/x-npy' },
      encodeNpy('float32', [N, N], bytes),
    );
    if (put.status !== 200) throw new Error(`put: ${put.status} ${put.body.toString()}`);
    const facts = JSON.parse(put.body.toString()) as { max_rank: number; stored_core_bytes: number; verdict: string };
    console.log(
      `field: ${N} x ${N} float32 (64 MiB), verdict ${facts.verdict}, max rank ${facts.max_rank}, ${facts.stored_core_bytes} core bytes`,
    );

    const serve = async (body: Record<string, unknown>) => {
      const r = await request(`${server.url}/v1/serve`, npyAccept, JSON.stringify({ key: 'field', ...body }));
      if (r.status !== 200) throw new Error(`serve ${JSON.stringify(body).slice(0, 100)}: ${r.status} ${r.body.toString().slice(0, 300)}`);
      return decodeNpy(r.body, N * N);
    };
    // The baseline: the whole array over HTTP, decoded, and sliced here (the slice is what a client pays beside the transfer).
    const whole = await timed(async () => {
      const a = await serve({});
      const f = new Float32Array(a.data.buffer, a.data.byteOffset, N * N);
      return f.subarray(1000 * N, 1001 * N).slice();
    });
    console.log(`\nwhole dense serve (64 MiB as x-npy) + slicing in the client: ${whole.toFixed(1)} ms (the baseline)`);
    const r = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    const rand = r(7);
    const points = Array.from({ length: 10000 }, () => [Math.floor(rand() * N), Math.floor(rand() * N)]);
    const cases: Array<[string, Record<string, unknown>]> = [
      ['one row', { region: [[1000, 1001]] }],
      ['one column', { region: [null, [1000, 1001]] }],
      [
        'a 64 x 64 block',
        {
          region: [
            [2000, 2064],
            [3000, 3064],
          ],
        },
      ],
      ['10,000 random points', { points }],
      ['level 4 (256 x 256 block means)', { level: 4 }],
    ];
    console.log('\n| selection | ms (median) | whole serve / selection | bar >= 20x |');
    console.log('|---|---|---|---|');
    for (const [name, body] of cases) {
      const t1 = await timed(() => serve(body));
      const ratio = whole / t1;
      console.log(`| ${name} | ${t1.toFixed(2)} | ${ratio.toFixed(1)}x | ${ratio >= 20 ? 'met' : 'MISSED'} |`);
    }

    // Points in the engine alone, on the train of the same field.
    const c = await engine.compress(bytes, 'float32', [N, N], { tolerance: 1e-6 });
    const P = 1_000_000;
    const flat = new Float64Array(2 * P);
    for (let i = 0; i < 2 * P; i++) flat[i] = Math.floor(rand() * N);
    const tEngine = await timed(() => engine.reconstructSelection(c.tt, [N, N], c.layout, 'float32', { points: flat }));
    const rate = P / (tEngine / 1000);
    console.log(
      `\nengine: ${P} random points of the field's train (max rank ${Math.max(...c.tt.ranks)}) in ${tEngine.toFixed(1)} ms: ` +
        `${(rate / 1e6).toFixed(2)}M values/s (bar >= 1M/s: ${rate >= 1e6 ? 'met' : 'MISSED'})`,
    );

    // A 4096^3 field put as its cores.
    const cube = await request(
      `${server.url}/v1/put_cores`,
      json,
      JSON.stringify({ key: 'cube', shape: CUBE_SHAPE, dtype: 'float32', cores: linearCubeCores() }),
    );
    if (cube.status !== 200) throw new Error(`put_cores: ${cube.status} ${cube.body.toString()}`);
    const serveCube = async (body: Record<string, unknown>) => {
      const res = await request(`${server.url}/v1/serve`, npyAccept, JSON.stringify({ key: 'cube', ...body }));
      if (res.status !== 200) throw new Error(`serve cube: ${res.status} ${res.body.toString().slice(0, 300)}`);
      return res.body.length;
    };
    const cubePoints = Array.from({ length: 1000 }, () => [0, 1, 2].map(() => Math.floor(rand() * 4096)));
    const cubeCases: Array<[string, Record<string, unknown>]> = [
      ['a plane [:, 1000, :] (4096 x 4096, 64 MiB)', { region: [null, [1000, 1001]] }],
      ['a line [17, 4095, :]', { region: [[17, 18], [-1]] }],
      ['1000 random points', { points: cubePoints }],
      ['level 5 (128^3 block means, 8 MiB)', { level: 5 }],
    ];
    console.log('\n4096^3 float32 train (256 GiB dense) put as its cores:\n');
    console.log('| selection | ms (median) | bar < 1000 ms |');
    console.log('|---|---|---|');
    for (const [name, body] of cubeCases) {
      const t1 = await timed(() => serveCube(body));
      console.log(`| ${name} | ${t1.toFixed(1)} | ${t1 < 1000 ? 'met' : 'MISSED'} |`);
    }
  } finally {
    agent.destroy();
    await server.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
