// npm run bench:gate: what the gate costs. In one run, on one machine, at the same concurrency:
//   bare    a bare Koa + @koa/router process answering GET /v1/get/:ns/:key with a fixed JSON body
//   gated   the same process and route with the whole gate in front: tenantGate (API key hash
//           lookup, sliding-window rate limit on rate-limiter-flexible, X-RateLimit-* headers),
//           authorize (ACL + quota reservation) and the durable CU charge (awaited before the
//           response, riding the SQLite group commit) on a real database file
//   server  the real server: GET /gate/health (app stack + one SQLite read, no gate) and the authenticated
//           GET /v1/get/default/k (app stack + gate + the storage read)
// Each target is its own process; the load generator is this process (keep-alive, CONCURRENCY
// requests in flight). Prints requests/s, p50/p99 latency, the ratios to bare (bar: >= 0.5) and the
// p99 each adds.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../src/runtime/node-flags.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const MAIN = path.resolve(HERE, '../src/main.js');
const SERVICE_KEY = 'bench_service_key_0123456789abcdef';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 5) * 1000;
const WARMUP_MS = 1500;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
// Every admitted request does the limiter's full work. SLOT_LIMIT stays on rate-limiter-flexible
// slots (<= SLOT_LIMIT_MAX) and admits up to 65k req/s; LOG_LIMIT is a huge custom limit (compact log).
const SLOT_LIMIT = { requests: 65_536, window_s: 1 };
const LOG_LIMIT = { requests: 10_000_000, window_s: 60 };

const GET_BODY = {
  key: 'k',
  namespace: 'default',
  version: 1,
  kind: 'blob',
  dtype: 'uint8',
  shape: [64],
  layout: 'row_major',
  compressed: false,
  oracle_verdict: 'passthrough',
  compression_ratio: 1,
  n_cores: 0,
  ranks: [],
  max_rank: 0,
  total_core_bytes: 0,
  stored_core_bytes: 0,
  original_bytes: 64,
  metadata: { bench: true },
  fingerprint: { frobenius_error: 0, max_abs_error: 0, relative_error: 0 },
  created_at: 1_700_000_000.123,
};

/** Child process: the bare route, or (`gated`) the same route behind the whole gate. */
async function routeServer(gated: boolean): Promise<void> {
  const { default: Koa } = await import('koa');
  const { default: Router } = await import('@koa/router');
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  const handler = (ctx: import('koa').Context) => {
    ctx.body = { ...GET_BODY, key: ctx.params.key, namespace: ctx.params.namespace };
  };
  let apiKey = '';
  let apiKeyLog = '';
  if (!gated) {
    router.get('/v1/get/:namespace/:key', handler);
  } else {
    const { loadConfig } = await import('../src/config.js');
    const { createLogger } = await import('../src/runtime/log.js');
    const { openSqliteStores } = await import('../src/store/sqlite/index.js');
    const { createGate } = await import('../src/gate/index.js');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-bench-gated-'));
    process.on('SIGTERM', () => {
      void rm(dir, { recursive: true, force: true }).finally(() => process.exit(0));
    });
    const config = loadConfig({ SVC_GATE_DATA_DIR: dir, SVC_GATE_ENGINE_SERVICE_KEY: SERVICE_KEY });
    const stores = await openSqliteStores(path.join(dir, 'gate.db'));
    const gate = await createGate({ tenants: stores.tenants, usage: stores.usage, config, log: createLogger('silent') });
    const { apiKey: key } = await gate.registry.create({
      tenantId: 'bench',
      plan: 'enterprise',
      namespaces: ['default'],
      email: null,
      rateLimit: SLOT_LIMIT,
      monthlyQuota: 1e12,
    });
    const { apiKey: logKey } = await gate.registry.create({
      tenantId: 'bench-log',
      plan: 'enterprise',
      namespaces: ['default'],
      email: null,
      rateLimit: LOG_LIMIT,
      monthlyQuota: 1e12,
    });
    apiKey = key;
    apiKeyLog = logKey;
    router.get('/v1/get/:namespace/:key', gate.tenantGate, async (ctx) => {
      await (ctx.state.gate as import('../src/gate/context.js').Authorizer).authorize(ctx.params.namespace!, 'get');
      handler(ctx);
    });
  }
  if (gated) {
    // problems (a 429 should the limit be reached) render as the real server renders them
    const { problemHandler } = await import('../src/http/errors.js');
    app.use(problemHandler({ error: () => undefined }));
  }
  app.use(router.routes());
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 5000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as net.AddressInfo).port, apiKey, apiKeyLog })}\n`);
  });
}

async function spawnRouteServer(
  mode: '--bare' | '--gated',
  procs: ChildProcess[],
): Promise<{ port: number; apiKey: string; apiKeyLog: string }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  procs.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (c: Buffer) => resolve(JSON.parse(c.toString()) as { port: number; apiKey: string; apiKeyLog: string }));
    child.once('exit', (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, proc: ChildProcess): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`process exited (${proc.exitCode})`);
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<number, number>;
}

/** Keep CONCURRENCY requests in flight against one URL for `ms`; latency in ms. */
async function load(name: string, port: number, urlPath: string, headers: Record<string, string>, ms: number): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let errors = 0;
  const stopAt = performance.now() + ms;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = http.request({ host: '127.0.0.1', port, path: urlPath, method: 'GET', headers, agent }, (res) => {
        res.on('data', () => undefined);
        res.on('end', () => {
          latencies.push(performance.now() - t0);
          statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < stopAt) await one();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { name, rps: latencies.length / elapsed, p50: q(0.5), p99: q(0.99), errors, statuses };
}

async function main(): Promise<void> {
  if (process.argv.includes('--bare')) return routeServer(false);
  if (process.argv.includes('--gated')) return routeServer(true);

  const procs: ChildProcess[] = [];
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-bench-gate-'));
  try {
    // the real server
    const port = await freePort();
    const server = spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAIN], {
      env: {
        ...process.env,
        SVC_GATE_HOST: '127.0.0.1',
        SVC_GATE_PORT: String(port),
        SVC_GATE_DATA_DIR: dataDir,
        SVC_GATE_ENGINE_SERVICE_KEY: SERVICE_KEY,
        SVC_GATE_LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    procs.push(server);
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/gate/health`, server);

    // a tenant whose limits stay out of the way (the limiter still does all its work), one entry
    const created = await fetch(`${base}/gate/onboard/create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SERVICE_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tenant_id: 'bench', plan: 'enterprise', rate_limit: SLOT_LIMIT, monthly_quota: 1e12 }),
    });
    const tenant = (await created.json()) as { api_key: string };
    const auth = { 'X-Api-Key': tenant.api_key };
    const put = await fetch(`${base}/v1/put`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'k', data_b64: Buffer.alloc(64, 7).toString('base64'), metadata: { bench: true } }),
    });
    if (put.status !== 200) throw new Error(`put failed: ${put.status} ${await put.text()}`);

    const bare = await spawnRouteServer('--bare', procs);
    const bareProc = procs[procs.length - 1]!;
    const gated = await spawnRouteServer('--gated', procs);
    const gatedProc = procs[procs.length - 1]!;

    console.log(
      `gate bench: ${CONCURRENCY} concurrent keep-alive connections, ${DURATION_MS / 1000} s per target after ${WARMUP_MS / 1000} s warm-up, ` +
        `best of ${ROUNDS} rounds (targets interleaved), ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(2)}`,
    );
    const targets: Array<[string, number, string, Record<string, string>]> = [
      ['bare Koa route', bare.port, '/v1/get/default/k', {}],
      ['same route behind the whole gate', gated.port, '/v1/get/default/k', { 'X-Api-Key': gated.apiKey }],
      ['  the same, 10M/60 s limit (log)', gated.port, '/v1/get/default/k', { 'X-Api-Key': gated.apiKeyLog }],
      ['server GET /gate/health (no gate)', port, '/gate/health', {}],
      ['server GET /v1/get (gate + storage)', port, '/v1/get/default/k', auth],
    ];
    const results: Result[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, [name, p, urlPath, headers]] of targets.entries()) {
        await load(name, p, urlPath, headers, WARMUP_MS);
        const r = await load(name, p, urlPath, headers, DURATION_MS);
        if (!results[i] || r.rps > results[i]!.rps) results[i] = r;
      }
    }
    const [bareR, gatedR, logR, healthR, serverR] = results as [Result, Result, Result, Result, Result];
    console.log('');
    console.log(`${'target'.padEnd(38)} ${'req/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}  statuses`);
    for (const r of results) {
      console.log(
        `${r.name.padEnd(38)} ${r.rps.toFixed(0).padStart(9)} ${r.p50.toFixed(2).padStart(8)} ${r.p99.toFixed(2).padStart(8)}  ${JSON.stringify(r.statuses)}${r.errors ? ` errors=${r.errors}` : ''}`,
      );
    }
    const ratio = gatedR.rps / bareR.rps;
    console.log('');
    console.log(
      `gate: throughput ratio gated/bare ${ratio.toFixed(2)} (bar >= 0.50: ${ratio >= 0.5 ? 'met' : 'NOT met'}); p99 added ${(gatedR.p99 - bareR.p99).toFixed(2)} ms at ${CONCURRENCY} connections`,
    );
    console.log(
      `whole server GET /v1/get: ratio to bare ${(serverR.rps / bareR.rps).toFixed(2)}, p99 added ${(serverR.p99 - bareR.p99).toFixed(2)} ms; ` +
        `server health route (app stack + 1 SQLite read) vs bare ${(healthR.rps / bareR.rps).toFixed(2)}`,
    );
    const usage = await fetch(`${base}/gate/admin/usage/bench`, { headers: { Authorization: `Bearer ${SERVICE_KEY}` } });
    const u = (await usage.json()) as { cus_used: number };
    const gets = serverR.statuses[200] ?? 0;
    console.log(
      `server metered ${u.cus_used} CU (1 put + every get, warm-ups included; best round's 200s alone: ${(gets * 0.1).toFixed(1)} CU); ` +
        `RSS: server ${await rssMiB(server.pid!)} MiB, gated ${await rssMiB(gatedProc.pid!)} MiB, bare ${await rssMiB(bareProc.pid!)} MiB`,
    );
    for (const r of [gatedR, logR, serverR]) {
      if (r.errors > 0 || Object.keys(r.statuses).some((s) => s !== '200')) process.exitCode = 1;
    }
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
