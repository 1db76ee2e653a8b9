// npm run bench:storage — the storage path end to end over HTTP against the engine's own time for the
// same array, measured in the same run:
//   1. a 16 MiB float32 field put, binary (application/x-npy) and JSON (data_b64), vs engine.compress
//      (bar: binary put <= 1.5x the engine time);
//   2. serve dense of that entry as application/x-npy (bar: >= 300 MB/s);
//   3. GET metadata latency at 200 concurrent requests (bar: p99 <= 20 ms).
// Beside each, the floor of the same client on the same machine: the same requests against a bare
// node:http server in its own process that does no work (reads and drops the upload, answers a
// prebuilt 16 MiB .npy or a fixed JSON body of the GET's size), measured interleaved with the service's.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { engine } from '../src/engine/index.js';
import { encodeNpy } from '../src/codec/npy.js';
import { applyMallocSettings } from '../src/runtime/process-memory.js';
import { logRecords, startServer } from '../test/helpers/server.js';
import { createTenant } from '../test/helpers/tenants.js';

const N = 2048; // 2048 x 2048 float32 = 16 MiB
// Repetitions of each timed request (medians are reported); more on a noisy machine.
const REPS = Math.max(1, Number(process.env.TTS_BENCH_REPS ?? 9) || 9);

function field(): Float32Array {
  const out = new Float32Array(N * N);
  for (let i = 0; i < N; i++) {
    const x = i / (N - 1);
    for (let j = 0; j < N; j++) {
      const y = j / (N - 1);
      out[i * N + j] = Math.sin(3 * x + 2 * y) + Math.exp(-x) * Math.cos(2 * y);
    }
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

// The client: node:http over keep-alive connections, one per request in flight. It costs a fraction
// of fetch's CPU per request (fetch spent 0.7-0.9 ms per GET here, which on 2 cores shared with the
// server was most of what the latency row measured). Bodies up to 1 MiB are kept; larger ones
// (serve's 16 MiB) are counted, as a client streaming them to disk would, and their first bytes kept.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
interface Reply {
  status: number;
  bytes: number;
  body: Buffer;
  json<T>(): T;
}
function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = typeof opts.body === 'string' ? Buffer.from(opts.body) : opts.body;
    const headers: Record<string, string> = { ...opts.headers };
    if (body) headers['content-length'] = String(body.length);
    const req = http.request(url, { method: opts.method ?? 'GET', headers, agent }, (res) => {
      const kept: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        if (bytes < 1 << 20) kept.push(c);
        bytes += c.length;
      });
      res.on('end', () => {
        const buf = Buffer.concat(kept);
        resolve({ status: res.statusCode ?? 0, bytes, body: buf, json: <T>() => JSON.parse(buf.toString('utf8')) as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The GET rows' load generator, as wrk and autocannon do it: one keep-alive socket per request in
 * flight, the request's bytes built once, the response read by its status line and Content-Length
 * (nothing else is parsed). A few us of CPU per request where node:http's client spent 110-150 us,
 * which on 2 cores shared with the server made the client the larger part of what the row measured.
 */
class LoadConnection {
  private pending: ((r: { status: number; bytes: number }) => void) | null = null;
  private failed: ((err: Error) => void) | null = null;
  private buf: Buffer | null = null;
  private end = -1; // offset of the current response's last byte + 1, once its head is read
  private status = 0;
  private bodyBytes = 0;

  private constructor(
    private readonly socket: net.Socket,
    private readonly request: Buffer,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.failed?.(err));
    socket.on('close', () => this.failed?.(new Error('connection closed')));
  }

  static open(base: string, path: string, headers: Record<string, string>): Promise<LoadConnection> {
    const url = new URL(base);
    const head = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    const request = Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1');
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.off('error', reject);
        resolve(new LoadConnection(socket, request));
      });
      socket.once('error', reject);
    });
  }

  send(): Promise<{ status: number; bytes: number }> {
    return new Promise((resolve, reject) => {
      this.pending = resolve;
      this.failed = reject;
      this.socket.write(this.request);
    });
  }

  close(): void {
    this.failed = null;
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    if (this.end < 0) {
      const headEnd = this.buf.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = this.buf.toString('latin1', 0, headEnd);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) {
        this.failed?.(new Error(`response without Content-Length: ${head.split('\r\n')[0]}`));
        return;
      }
      this.status = Number(head.slice(9, 12));
      this.bodyBytes = Number(length[1]);
      this.end = headEnd + 4 + this.bodyBytes;
    }
    if (this.buf.length < this.end) return;
    if (this.buf.length > this.end) {
      this.failed?.(new Error('bytes after the response (one request is in flight at a time)'));
      return;
    }
    this.buf = null;
    this.end = -1;
    const done = this.pending!;
    this.pending = null;
    this.failed = null;
    done({ status: this.status, bytes: this.bodyBytes });
  }
}

/** duration_ms of the server's request log lines for `method` (server-side time of each request). */
function requestDurations(logs: string[], method: string): number[] {
  return logRecords({ logs }).flatMap((r) =>
    r.msg === 'request' && r.method === method && typeof r.duration_ms === 'number' ? [r.duration_ms] : [],
  );
}

/**
 * `--floor-server <npy bytes> <get body bytes>`: the bare server of the floor rows; prints its port.
 * It keeps freed memory as the service does (src/runtime/process-memory.ts), so that its reads of an upload
 * do not page-fault where the service's do not.
 */
function floorServer(npyBytes: number, getBytes: number): void {
  applyMallocSettings();
  const npy = Buffer.alloc(npyBytes, 1);
  const get = Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, getBytes - 10)) }));
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/put') {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    } else if (req.method === 'POST') {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-npy', 'content-length': npy.length }).end(npy));
    } else {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': get.length }).end(get);
    }
  });
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
}

function spawnFloorServer(npyBytes: number, getBytes: number): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--floor-server', String(npyBytes), String(getBytes)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', (c: Buffer) => resolve({ url: `http://127.0.0.1:${c.toString().trim()}`, proc }));
    proc.once('exit', (code) => reject(new Error(`floor server exited (${code})`)));
  });
}

async function main(): Promise<void> {
  const data = field();
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const npy = encodeNpy('float32', [N, N], bytes);
  const MiB = bytes.length / 2 ** 20;

  const server = await startServer({ env: { SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '10000000' } });
  let floor: { url: string; proc: ChildProcess } | null = null;
  try {
    const t = await createTenant(server, { plan: 'enterprise', namespaces: ['default'] });
    const auth = { 'X-Api-Key': t.api_key };

    // The engine alone (this process, same array, default tolerance 1e-6) and the binary put over
    // HTTP, back to back in pairs so that both see the same machine; medians of REPS after WARM of
    // each (a service process's first puts grow its heap to what an upload and the one before it
    // hold, and page-fault while they do: 4,100 then 2,500 faults, then under 100). The bar is judged on the median of the pairs' ratios: the host's speed drifts by 2x
    // within a run here, and a ratio of medians mixes puts and compressions from different moments.
    const engineTimes: number[] = [];
    const binTimes: number[] = [];
    const binServer: number[] = [];
    let ranks: number[] = [];
    let putBody: { verdict?: string; compression_ratio?: number; fingerprint?: { relative_error: number } } = {};
    const WARM = 3;
    for (let r = 0; r < WARM + REPS; r++) {
      let t0 = process.hrtime.bigint();
      const res = await engine.compress(bytes, 'float32', [N, N], { tolerance: 1e-6 });
      if (r >= WARM) engineTimes.push(ms(t0));
      ranks = res.tt.ranks;
      t0 = process.hrtime.bigint();
      const put = await request(`${server.url}/v1/put?key=bench%2Ffield`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-npy' },
        body: npy,
      });
      putBody = put.json<typeof putBody>();
      if (put.status !== 200) throw new Error(`binary put: ${put.status} ${JSON.stringify(putBody)}`);
      if (r >= WARM) {
        binTimes.push(ms(t0));
        binServer.push(requestDurations(server.logs, 'POST').at(-1) ?? NaN);
      }
    }
    // The floor of the binary put: the same upload to the bare server.
    const getBytes = (await request(`${server.url}/v1/get/default/bench%2Ffield`, { headers: auth })).bytes;
    floor = await spawnFloorServer(npy.length, getBytes);
    const floorPut: number[] = [];
    for (let r = 0; r < WARM + REPS; r++) {
      const t0 = process.hrtime.bigint();
      const put = await request(`${floor.url}/put`, { method: 'POST', headers: { 'content-type': 'application/x-npy' }, body: npy });
      if (put.status !== 200) throw new Error(`floor put: ${put.status}`);
      if (r >= WARM) floorPut.push(ms(t0));
    }

    const reconstructTimes: number[] = [];
    {
      const res = await engine.compress(bytes, 'float32', [N, N], { tolerance: 1e-6 });
      for (let r = 0; r < REPS; r++) {
        const t0 = process.hrtime.bigint();
        await engine.reconstruct(res.tt, [N, N], res.layout, 'float32');
        reconstructTimes.push(ms(t0));
      }
    }
    const jsonTimes: number[] = [];
    const b64 = npy.toString('base64');
    for (let r = 0; r < REPS; r++) {
      const t0 = process.hrtime.bigint();
      const body = JSON.stringify({ key: 'bench/field-json', data_b64: b64 });
      const res = await request(`${server.url}/v1/put`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body });
      if (res.status !== 200) throw new Error(`JSON put: ${res.status}`);
      jsonTimes.push(ms(t0));
    }

    const serveTimes: number[] = [];
    const floorServe: number[] = [];
    for (let r = 0; r < 6; r++) {
      // the service, then the same request to the bare server
      for (const [url, times] of [
        [`${server.url}/v1/serve`, serveTimes],
        [`${floor.url}/serve`, floorServe],
      ] as const) {
        const t0 = process.hrtime.bigint();
        const res = await request(url, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json', Accept: 'application/x-npy' },
          body: JSON.stringify({ key: 'bench/field' }),
        });
        // the bare server answers filler bytes; the service's .npy header must be the source's
        const headerOk = !url.includes('/v1/') || res.body.subarray(0, 64).equals(npy.subarray(0, 64));
        if (res.status !== 200 || res.bytes !== npy.length || !headerOk) {
          throw new Error(`serve: ${res.status} ${res.bytes} bytes`);
        }
        if (r > 0) times.push(ms(t0));
      }
    }

    // GET latency: 200 requests in flight at once, several rounds, from the load generator's
    // connections (one per request in flight), against the service and then the bare server.
    const CONC = 200;
    const ROUNDS = 10;
    const WARM_ROUNDS = 20;
    const getPath = '/v1/get/default/bench%2Ffield';
    const burst = async (conns: LoadConnection[], lat: number[]) => {
      await Promise.all(
        conns.map(async (c) => {
          const t0 = process.hrtime.bigint();
          const res = await c.send();
          if (res.status !== 200 || res.bytes !== getBytes) throw new Error(`get: ${res.status}, ${res.bytes} bytes`);
          lat.push(ms(t0));
        }),
      );
    };
    let logStart = 0;
    const latencies = async (url: string, warmed = () => {}): Promise<number[]> => {
      const conns = await Promise.all(Array.from({ length: CONC }, () => LoadConnection.open(url, getPath, auth)));
      try {
        // Warm-up: connections, caches, and the server's JIT. After 5 bursts (1,000 requests) the bare
        // server still answered a burst in 30 ms at p99 and in 4-7 ms after 20: the optimising tiers
        // had not caught up, and the row measured V8's warm-up rather than the steady state.
        for (let r = 0; r < WARM_ROUNDS; r++) await burst(conns, []);
        warmed();
        const lat: number[] = [];
        for (let r = 0; r < ROUNDS; r++) await burst(conns, lat);
        return lat;
      } finally {
        for (const c of conns) c.close();
      }
    };
    const lat = await latencies(server.url, () => {
      logStart = server.logs.length;
    });
    const floorLat = await latencies(floor.url);
    const getServer = requestDurations(server.logs.slice(logStart), 'GET');

    const eng = median(engineTimes);
    const bin = median(binTimes);
    const pairedRatio = median(binTimes.map((b, i) => b / engineTimes[i]!));
    const json = median(jsonTimes);
    const serve = median(serveTimes);
    const serveMBs = npy.length / 1e6 / (serve / 1e3);
    const floorServeMBs = npy.length / 1e6 / (median(floorServe) / 1e3);
    const p50 = pct(lat, 50);
    const p99 = pct(lat, 99);
    const row = (name: string, value: string, baseline: string, bar: string, ok: boolean | null) =>
      `  ${name.padEnd(40)} ${value.padStart(14)}   ${baseline.padEnd(34)} ${bar.padEnd(18)} ${ok === null ? '' : ok ? 'PASS' : 'FAIL'}`;
    const lines = [
      `storage bench: ${N}x${N} float32 field (${MiB.toFixed(0)} MiB), engine ${engine.info().backend} (${engine.info().blas}, ${engine.info().threads} threads)`,
      `  put verdict ${putBody.verdict}, ratio ${putBody.compression_ratio?.toFixed(1)}, relative_error ${putBody.fingerprint?.relative_error.toExponential(2)}, max rank ${Math.max(...ranks)}`,
      '',
      `  ${'measure'.padEnd(40)} ${'value'.padStart(14)}   ${'baseline (same run)'.padEnd(34)} ${'bar'.padEnd(18)}`,
      row('engine.compress (in process)', `${eng.toFixed(1)} ms`, '-', '-', null),
      row(
        'binary put over HTTP (x-npy)',
        `${bin.toFixed(1)} ms`,
        `${pairedRatio.toFixed(2)}x engine (paired)`,
        '<= 1.5x engine',
        pairedRatio <= 1.5,
      ),
      row('  ratio of the medians', `${(bin / eng).toFixed(2)}x`, `of ${REPS} puts and ${REPS} compressions`, '-', null),
      row(
        '  of which inside the server',
        `${median(binServer).toFixed(1)} ms`,
        `${(median(binServer) / eng).toFixed(2)}x engine`,
        '-',
        null,
      ),
      row(
        '  floor: same upload, bare server',
        `${median(floorPut).toFixed(1)} ms`,
        `${(median(floorPut) / eng).toFixed(2)}x engine`,
        '-',
        null,
      ),
      row('JSON put over HTTP (data_b64)', `${json.toFixed(1)} ms`, `${(json / eng).toFixed(2)}x engine`, '-', null),
      row('engine.reconstruct (in process)', `${median(reconstructTimes).toFixed(1)} ms`, '-', '-', null),
      row('serve dense as x-npy', `${serveMBs.toFixed(0)} MB/s`, `${serve.toFixed(1)} ms per request`, '>= 300 MB/s', serveMBs >= 300),
      row(
        '  floor: same download, bare server',
        `${floorServeMBs.toFixed(0)} MB/s`,
        `${median(floorServe).toFixed(1)} ms per request`,
        '-',
        null,
      ),
      row(`GET metadata p50 (${CONC} concurrent)`, `${p50.toFixed(2)} ms`, `${lat.length} requests`, '-', null),
      row(`GET metadata p99 (${CONC} concurrent)`, `${p99.toFixed(2)} ms`, `max ${Math.max(...lat).toFixed(2)} ms`, '<= 20 ms', p99 <= 20),
      row(
        '  inside the server p50 / p99',
        `${pct(getServer, 50).toFixed(2)} / ${pct(getServer, 99).toFixed(2)} ms`,
        `${getServer.length} requests`,
        '-',
        null,
      ),
      row(
        '  floor: bare server p50 / p99',
        `${pct(floorLat, 50).toFixed(2)} / ${pct(floorLat, 99).toFixed(2)} ms`,
        `${floorLat.length} requests`,
        '-',
        null,
      ),
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    floor?.proc.kill();
    await server.destroy();
  }
}

if (process.argv[2] === '--floor-server') {
  floorServer(Number(process.argv[3]), Number(process.argv[4]));
} else {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
