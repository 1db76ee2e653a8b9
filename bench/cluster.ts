// npm run bench:cluster: what the shared engines cost per request, through nginx, in one run:
//   sqlite   one node on SQLite and local files (the single-node default)
//   pg x1..3 one, two and three nodes on PostgreSQL, Redis (rate windows, change messages) and radosgw
//            (blobs), all behind the same nginx; the node set changes by rewriting nginx's upstreams and
//            reloading it (`scripts/cluster.sh balance`), the nodes stay up
// Each: puts of a 64x64 float32 field (PUT_CONCURRENCY in flight, a key per client), then GET of its
// metadata and POST /v1/serve of it as dense .npy at 50 in flight. Before any of them, every node runs
// the same three loads alone, unmeasured, so that no configuration is measured on a node still warming
// up; the nodes' logs go to files, as a deployment keeps them, not through this process. Then a
// graceful restart under load: the second of three PostgreSQL nodes is drained from nginx
// (`scripts/cluster.sh drain`), gets SIGTERM, is started again and put back, while gets, serves and
// puts run through nginx; every request must answer 2xx and every acknowledged put must be readable.
// Bars: GET p99 on PostgreSQL (each node count) <= 2x SQLite's; no request failed or lost in the restart.
// The load generator is this process (keep-alive); on a 2-core machine the nodes, nginx, the engines and
// the client share the cores, so the point is the per-request overhead of the shared engines, not scaling.
//
// Needs root (scripts/cluster.sh services starts PostgreSQL, Redis and radosgw, or finds them running,
// with its TTSTORE_* port settings). BENCH_CLUSTER_PORTS: five free ports, three PostgreSQL nodes, the
// SQLite node, nginx (default "8094 8095 8096 8097 8098"); BENCH_SECONDS per measurement (default 3).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { encodeNpy } from '../src/codec/npy.js';
import { startServer, type StartOptions, type TestServer } from '../test/helpers/server.js';
import { createTenant, type CreatedTenant } from '../test/helpers/tenants.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLUSTER_SH = path.join(ROOT, 'scripts/cluster.sh');
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const SECONDS = Math.max(1, Number(process.env.BENCH_SECONDS ?? 3) || 3);
const WARMUP_MS = 500;
/** Each node's run alone before anything is measured, per operation (see main). */
const WARM_SECONDS = 1.5;
const GET_CONCURRENCY = 50;
const PUT_CONCURRENCY = 8;
const [PG_PORTS, SQLITE_PORT, LB_PORT] = (() => {
  const p = (process.env.BENCH_CLUSTER_PORTS ?? '8094 8095 8096 8097 8098').trim().split(/\s+/).map(Number);
  if (p.length !== 5 || p.some((x) => !Number.isInteger(x))) throw new Error('BENCH_CLUSTER_PORTS: five port numbers');
  return [p.slice(0, 3), p[3]!, p[4]!] as const;
})();
// The bench's nginx: its own folder and port, beside whatever cluster.sh's own nginx serves.
const LB_DIR = path.join(os.tmpdir(), `ttstore-bench-nginx-${LB_PORT}`);
const FRONT = `http://127.0.0.1:${LB_PORT}`;
// The nodes' logs, a file each as a deployment keeps them (not piped into this process: see logFile).
const LOG_DIR = path.join(os.tmpdir(), `ttstore-bench-logs-${LB_PORT}`);

/** The 64x64 float32 field every put sends (a smooth one: it is stored as cores). */
function smallField(): Buffer {
  const n = 64;
  const a = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) a[i * n + j] = Math.sin((3 * i) / n + (2 * j) / n);
  return encodeNpy('float32', [n, n], new Uint8Array(a.buffer));
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

interface Answer {
  status: number; // 0: no answer (connection refused, reset)
  ms: number;
  body: Buffer;
}

function request(method: string, urlPath: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request(FRONT + urlPath, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - started, body: Buffer.alloc(0) }));
    });
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started, body: Buffer.alloc(0) }));
    req.end(body);
  });
}

interface Measured {
  n: number;
  failed: number;
  rps: number;
  p50: number;
  p99: number;
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

/** `clients` loops of `one(client)` for the warm-up and then `seconds`; only the latter is counted. */
async function measure(clients: number, one: (client: number) => Promise<Answer>, seconds = SECONDS): Promise<Measured> {
  const warmEnd = performance.now() + WARMUP_MS;
  const end = warmEnd + seconds * 1000;
  const ms: number[] = [];
  let failed = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < end) {
        const a = await one(c);
        if (performance.now() < warmEnd) continue;
        ms.push(a.ms);
        if (a.status < 200 || a.status > 299) failed++;
      }
    }),
  );
  ms.sort((x, y) => x - y);
  return { n: ms.length, failed, rps: ms.length / seconds, p50: pct(ms, 50), p99: pct(ms, 99) };
}

const tenantHeaders = (t: CreatedTenant) => ({ 'X-Api-Key': t.api_key });
const putOf = (t: CreatedTenant, key: string, npy: Buffer) =>
  request('POST', `/v1/put?namespace=default&key=${key}`, { ...tenantHeaders(t), 'Content-Type': 'application/x-npy' }, npy);
const getMeta = (t: CreatedTenant) => request('GET', '/v1/get/default/small', tenantHeaders(t));
const SERVE_BODY = Buffer.from(JSON.stringify({ key: 'small', target: 'dense' }));
const serveDense = (t: CreatedTenant) =>
  request('POST', '/v1/serve', { ...tenantHeaders(t), 'Content-Type': 'application/json', Accept: 'application/x-npy' }, SERVE_BODY);

/** A fresh database in the cluster's PostgreSQL (test/helpers/pg.ts reads its URL before this can set it). */
async function benchDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ttstore_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** `scripts/cluster.sh <args>` on the bench's own nginx, over `ports`. */
const lb = (ports: number[], ...args: string[]) =>
  run('bash', [CLUSTER_SH, ...args], {
    env: { ...process.env, TTSTORE_LB_DIR: LB_DIR, TTSTORE_LB_PORT: String(LB_PORT), TTSTORE_NODE_PORTS: ports.join(' ') },
  });
/** nginx round-robin over `ports`: started, or rewritten and reloaded (returns once the old workers have gone). */
const balance = (ports: number[]) => lb(ports, 'balance');

async function main(): Promise<void> {
  await rm(LB_DIR, { recursive: true, force: true }); // no node left marked down by a run that was cut short
  await rm(LOG_DIR, { recursive: true, force: true });
  await mkdir(LOG_DIR, { recursive: true });
  // PostgreSQL, Redis and radosgw (started, or found running), and the variables naming them
  const { stdout } = await run('bash', [CLUSTER_SH, 'services'], { env: process.env, maxBuffer: 1 << 20 });
  const vars = Object.fromEntries([...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  const database = await benchDatabase(vars.TTSTORE_TEST_DATABASE_URL!);
  const shared: Record<string, string> = {
    SVC_GATE_DATABASE_URL: database.url,
    SVC_GATE_REDIS_URL: vars.TTSTORE_TEST_REDIS_URL!,
    SVC_GATE_BLOB_URL: `s3://${vars.TTSTORE_TEST_S3_BUCKET}/bench-${randomBytes(4).toString('hex')}`,
    SVC_GATE_S3_ENDPOINT: vars.TTSTORE_TEST_S3_ENDPOINT!,
    SVC_GATE_S3_ACCESS_KEY_ID: vars.TTSTORE_TEST_S3_ACCESS_KEY_ID!,
    SVC_GATE_S3_SECRET_ACCESS_KEY: vars.TTSTORE_TEST_S3_SECRET_ACCESS_KEY!,
  };
  // Every node alike but for its engines: 50 dense serves of one tenant in flight are not refused
  // (CONTRACT 8's per-tenant limit is not what is measured), and the graceful stop of scripts/cluster.sh.
  const common = { SVC_GATE_TENANT_INFLIGHT: '64', SVC_GATE_SHUTDOWN_IDLE_S: '3' };
  const logFile = (port: number) => path.join(LOG_DIR, `node-${port}.log`);
  const pgOptions = (port: number): StartOptions => ({
    env: { ...common, ...shared, SVC_GATE_PORT: String(port) },
    logFile: logFile(port),
  });
  const servers: TestServer[] = [];
  try {
    const sqlite = await startServer({ env: { ...common, SVC_GATE_PORT: String(SQLITE_PORT) }, logFile: logFile(SQLITE_PORT) });
    servers.push(sqlite);
    const pg: TestServer[] = [];
    for (const port of PG_PORTS) pg.push(await startServer(pgOptions(port))); // one at a time: the first migrates
    servers.push(...pg);
    const npy = smallField();
    const configs: Array<[string, number[]]> = [
      ['sqlite x1', [SQLITE_PORT]],
      ['pg x1', PG_PORTS.slice(0, 1)],
      ['pg x2', PG_PORTS.slice(0, 2)],
      ['pg x3', PG_PORTS.slice()],
    ];
    // Every node alone through nginx first, with the load each configuration then measures: a node that
    // has run only a few hundred requests runs them in V8's unoptimized tiers, several times slower, and
    // the third node of three would otherwise be measured while it warms up (a long-running node is not).
    // A fresh tenant's puts, GETs and serves through nginx to the nodes it balances over now.
    const loads = async (config: string, seconds: number): Promise<Array<{ config: string; op: string } & Measured>> => {
      const t = await createTenant({ url: FRONT, serviceKey: sqlite.serviceKey });
      await sleep(200); // every node learns of the tenant
      if ((await putOf(t, 'small', npy)).status !== 200) throw new Error(`${config}: the first put failed`);
      return [
        { config, op: `put (${PUT_CONCURRENCY} in flight)`, ...(await measure(PUT_CONCURRENCY, (c) => putOf(t, `p${c}`, npy), seconds)) },
        { config, op: `GET metadata (${GET_CONCURRENCY})`, ...(await measure(GET_CONCURRENCY, () => getMeta(t), seconds)) },
        { config, op: `serve dense (${GET_CONCURRENCY})`, ...(await measure(GET_CONCURRENCY, () => serveDense(t), seconds)) },
      ];
    };
    for (const port of [SQLITE_PORT, ...PG_PORTS]) {
      await balance([port]);
      await loads(`warm-up of ${port}`, WARM_SECONDS);
    }
    const rows: Array<{ config: string; op: string } & Measured> = [];
    for (const [config, ports] of configs) {
      await balance(ports);
      rows.push(...(await loads(config, SECONDS)));
    }

    // Graceful restart under load: pg x3 in front; node 2 drained from nginx, stopped (SIGTERM), started
    // again and put back, as `scripts/cluster.sh restart-node` does (docs/deploy.md).
    await balance(PG_PORTS.slice());
    const t = await createTenant({ url: FRONT, serviceKey: sqlite.serviceKey });
    await sleep(200);
    if ((await putOf(t, 'small', npy)).status !== 200) throw new Error('restart: the first put failed');
    let stopAt = Infinity;
    const outcome = { requests: 0, failed: [] as string[], acked: [] as Array<{ key: string; version: number }> };
    const loop = async (one: () => Promise<Answer>, onOk?: (a: Answer) => void) => {
      while (performance.now() < stopAt) {
        const a = await one();
        outcome.requests++;
        if (a.status >= 200 && a.status <= 299) onOk?.(a);
        else outcome.failed.push(`${a.status} ${a.body.toString('utf8', 0, 120)}`);
      }
    };
    const load = Promise.all([
      ...Array.from({ length: 20 }, () => loop(() => getMeta(t))),
      ...Array.from({ length: 10 }, () => loop(() => serveDense(t))),
      ...Array.from({ length: PUT_CONCURRENCY }, (_, c) =>
        loop(
          () => putOf(t, `r${c}`, npy),
          (a) => outcome.acked.push({ key: `r${c}`, version: (JSON.parse(a.body.toString()) as { version: number }).version }),
        ),
      ),
    ]);
    await sleep(1500);
    const stopping = performance.now();
    await lb(PG_PORTS.slice(), 'drain', String(PG_PORTS[1]));
    const drainedMs = performance.now() - stopping;
    const code = await pg[1]!.stop('SIGTERM');
    const stoppedMs = performance.now() - stopping;
    pg[1] = await startServer(pgOptions(PG_PORTS[1]!));
    servers.push(pg[1]);
    await lb(PG_PORTS.slice(), 'undrain', String(PG_PORTS[1]));
    const downMs = performance.now() - stopping;
    stopAt = performance.now() + 1500;
    await load;
    // every acknowledged put is there, as the version it was acknowledged as
    let lost = 0;
    for (const a of outcome.acked) {
      const r = await request('GET', `/v1/get/default/${a.key}?version=${a.version}`, tenantHeaders(t));
      if (r.status !== 200 || (JSON.parse(r.body.toString()) as { version: number }).version !== a.version) lost++;
    }

    const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
    const sqliteP99 = rows.find((r) => r.config === 'sqlite x1' && r.op.startsWith('GET'))!.p99;
    console.log(
      `\nttstore through nginx on ${os.cpus().length} cores, ${SECONDS} s per measurement after ${WARMUP_MS} ms warm-up` +
        ` (and ${WARM_SECONDS} s of each load on each node alone before)`,
    );
    console.log('config     | operation             |    req/s | p50 ms | p99 ms | failed | GET p99 / sqlite');
    console.log('-----------|-----------------------|----------|--------|--------|--------|-----------------');
    for (const r of rows) {
      const ratio = r.op.startsWith('GET') ? (r.p99 / sqliteP99).toFixed(2) + 'x' : '';
      console.log(
        `${r.config.padEnd(10)} | ${r.op.padEnd(21)} | ${r.rps.toFixed(0).padStart(8)} | ${ms(r.p50).padStart(6)} | ${ms(r.p99).padStart(6)} | ${String(r.failed).padStart(6)} | ${ratio}`,
      );
    }
    const worst = Math.max(...rows.filter((r) => r.config.startsWith('pg') && r.op.startsWith('GET')).map((r) => r.p99 / sqliteP99));
    console.log(`\nbar: GET p99 on PostgreSQL <= 2x SQLite's: worst ${worst.toFixed(2)}x: ${worst <= 2 ? 'PASS' : 'FAIL'}`);
    console.log(
      `graceful restart of 1 of 3 nodes under load (20 gets, 10 dense serves, ${PUT_CONCURRENCY} puts in flight): drained from nginx ` +
        `in ${drainedMs.toFixed(0)} ms, exited ${code} ${stoppedMs.toFixed(0)} ms after the drain began, back in nginx ${downMs.toFixed(0)} ms after; ${outcome.requests} requests, ` +
        `${outcome.failed.length} failed, ${outcome.acked.length} puts acknowledged, ${lost} lost`,
    );
    for (const f of outcome.failed.slice(0, 5)) console.log(`  failed: ${f}`);
    const restartOk = outcome.failed.length === 0 && lost === 0 && outcome.acked.length > 0;
    console.log(`bar: no request failed or lost in the graceful restart: ${restartOk ? 'PASS' : 'FAIL'}`);
    console.log(`the nodes' logs: ${LOG_DIR}`);
    if (worst > 2 || !restartOk) process.exitCode = 1;
  } finally {
    await run('bash', [CLUSTER_SH, 'balance-stop'], { env: { ...process.env, TTSTORE_LB_DIR: LB_DIR } }).catch(() => undefined);
    await Promise.all(servers.map((s) => s.destroy()));
    await rm(LB_DIR, { recursive: true, force: true });
    await database.drop().catch(() => undefined);
    agent.destroy();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
