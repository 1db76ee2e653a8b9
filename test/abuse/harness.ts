// The adversarial suite's instruments (CONTRACT.md section 8): a victim tenant that keeps making small
// requests while an attack runs, the server's memory as /proc sees it, and the books (entries stored,
// CU charged) that a rejected request must leave as they were.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { encodeNpy } from '../../src/codec/npy.js';
import { MAX_BATCH_ENTRIES, METADATA_MAX_BYTES, METADATA_MAX_KEYS } from '../../src/limits/input.js';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { admin, createTenant, tenantHeaders, type CreatedTenant, type TenantOptions } from '../helpers/tenants.js';

/** Section 8's "a fraction of a second", on a 2-core host that also runs the attacker's client. */
export const VICTIM_WORST_MS = 750;

export interface VictimReport {
  requests: number;
  /** Slowest request, milliseconds. */
  worstMs: number;
  medianMs: number;
  /** Requests that did not answer as expected (status and path). */
  failures: string[];
}

export interface Victim {
  /** Stop after the request in flight; resolves with what the victim saw. */
  stop(): Promise<VictimReport>;
}

/** One small request of the victim's loop: method, path, JSON body, the status it expects. */
interface Step {
  method: string;
  path: string;
  json?: unknown;
  expect: number;
}

const SMALL_ARRAY = (() => {
  // A 16 KiB float64 .npy: above the compression threshold, so a put goes through the engine.
  const n = 2048;
  const header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2048,), }";
  const pad = 64 - ((10 + header.length + 1) % 64);
  const h = Buffer.from(header + ' '.repeat(pad) + '\n', 'latin1');
  const pre = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(pre, 0);
  pre[6] = 1;
  pre.writeUInt16LE(h.length, 8);
  const data = Buffer.alloc(n * 8);
  for (let i = 0; i < n; i++) data.writeDoubleLE(Math.sin(i / 50) + 0.001 * (i % 7), i * 8);
  return Buffer.concat([pre, h, data]).toString('base64');
})();

/**
 * A tenant that repeats small, metered requests (a metadata GET, a 16 KiB put that the engine
 * compresses, a dense serve of it, a list) one after another over its own keep-alive connection,
 * and records the latency of each. Its entry `victim` is written before the loop starts.
 */
export async function startVictim(server: Pick<TestServer, 'url'>, tenant: CreatedTenant): Promise<Victim> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const headers = { ...tenantHeaders(tenant), 'content-type': 'application/json' };
  const first = await http(server.url, 'POST', '/v1/put', {
    json: { key: 'victim', data_b64: SMALL_ARRAY },
    headers: tenantHeaders(tenant),
  });
  if (first.status !== 200) throw new Error(`victim could not write its entry: ${first.status} ${first.text}`);
  const steps: Step[] = [
    { method: 'GET', path: '/v1/get/default/victim', expect: 200 },
    { method: 'POST', path: '/v1/put', json: { key: 'victim', data_b64: SMALL_ARRAY }, expect: 200 },
    { method: 'POST', path: '/v1/serve', json: { key: 'victim' }, expect: 200 },
    { method: 'GET', path: '/v1/list/default?limit=10', expect: 200 },
  ];
  const latencies: number[] = [];
  const failures: string[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const step = steps[i % steps.length]!;
      const t0 = performance.now();
      const status = await send(server.url, agent, step, headers).catch((err: Error) => `error ${err.message}`);
      latencies.push(performance.now() - t0);
      if (status !== step.expect) failures.push(`${step.method} ${step.path}: ${status}`);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        requests: latencies.length,
        worstMs: sorted.at(-1) ?? 0,
        medianMs: sorted[Math.floor(sorted.length / 2)] ?? 0,
        failures,
      };
    },
  };
}

function send(base: string, agent: Agent, step: Step, headers: Record<string, string>): Promise<number> {
  const body = step.json === undefined ? undefined : Buffer.from(JSON.stringify(step.json));
  return new Promise((resolve, reject) => {
    const req = request(
      base + step.path,
      {
        method: step.method,
        agent,
        headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** Resident memory of a process, bytes (VmRSS); 0 once it has exited. */
export function rssOf(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

export interface MemoryWatch {
  /** Stop sampling; resolves with the largest growth over the resident size at the start, bytes. */
  stop(): { baselineBytes: number; peakBytes: number; growthBytes: number };
}

/** Samples the server's resident size every `everyMs` from now on. */
export function watchMemory(pid: number, everyMs = 10): MemoryWatch {
  const baselineBytes = rssOf(pid);
  let peakBytes = baselineBytes;
  const timer = setInterval(() => {
    peakBytes = Math.max(peakBytes, rssOf(pid));
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      peakBytes = Math.max(peakBytes, rssOf(pid));
      return { baselineBytes, peakBytes, growthBytes: peakBytes - baselineBytes };
    },
  };
}

export interface Books {
  /** CU used in the current period, by every operation but list (booksOf itself lists). */
  cusUsed: number;
  /** Live keys of each namespace asked about. */
  keys: Record<string, number>;
}

/** What a tenant has stored and been charged, as the admin and list endpoints say. */
export async function booksOf(
  server: Pick<TestServer, 'url' | 'serviceKey'>,
  tenant: CreatedTenant,
  namespaces = ['default'],
): Promise<Books> {
  const keys: Record<string, number> = {};
  for (const ns of namespaces) {
    const r = await http(server.url, 'GET', `/v1/list/${ns}?limit=1`, { headers: tenantHeaders(tenant) });
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.text}`);
    keys[ns] = r.body.total as number;
  }
  const usage = await admin(server, 'GET', `/gate/admin/usage/${tenant.tenant_id}`);
  if (usage.status !== 200) throw new Error(`usage: ${usage.status} ${usage.text}`);
  const milli = (cu: number) => Math.round(cu * 1000);
  return { cusUsed: (milli(usage.body.cus_used) - milli(usage.body.breakdown.list)) / 1000, keys };
}

export interface AttackOutcome<T> {
  result: T;
  /** Time the attacker waited for its answer, milliseconds. */
  answerMs: number;
  victim: VictimReport;
  memory: { baselineBytes: number; peakBytes: number; growthBytes: number };
}

/**
 * Run `attack` while a victim tenant loops small requests and the server's memory is watched. The
 * victim runs for at least `minVictimMs` (so a fast rejection still meets some victim traffic).
 */
export async function underAttack<T>(
  server: TestServer,
  victimTenant: CreatedTenant,
  attack: () => Promise<T>,
  minVictimMs = 300,
): Promise<AttackOutcome<T>> {
  const victim = await startVictim(server, victimTenant);
  const memory = watchMemory(server.proc.pid!);
  const started = performance.now();
  let result: T;
  let answerMs: number;
  try {
    result = await attack();
    answerMs = performance.now() - started;
    const left = minVictimMs - (performance.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  } catch (err) {
    // The victim and the sampler stop with the attack, so neither outlives the server.
    memory.stop();
    await victim.stop();
    throw err;
  }
  const mem = memory.stop();
  return { result, answerMs, victim: await victim.stop(), memory: mem };
}

/** A tenant for the attacker's or the victim's side (enterprise terms unless a plan is given). */
export function tenant(server: Pick<TestServer, 'url' | 'serviceKey'>, opts: TenantOptions = {}): Promise<CreatedTenant> {
  return createTenant(server, opts);
}

/** The largest legal metadata: 256 top-level names whose compact JSON is just under 64 KiB. */
export function worstMetadata(i: number): Record<string, string> {
  const name = (k: number) => `k${String(k).padStart(3, '0')}`;
  // Each pair costs "kNNN":"value", = 4 + 2 + 1 + value + 2 + 1 bytes, plus the braces.
  const valueBytes = Math.floor((METADATA_MAX_BYTES - 2) / METADATA_MAX_KEYS) - 10;
  const md = Object.fromEntries(Array.from({ length: METADATA_MAX_KEYS }, (_, k) => [name(k), `${i}-${k}-`.padEnd(valueBytes, 'x')]));
  if (Buffer.byteLength(JSON.stringify(md)) > METADATA_MAX_BYTES) throw new Error('metadata over 64 KiB');
  return md;
}

/** A float32 core [1, 8, 1], as put_cores takes it. */
const TINY_CORE_B64 = encodeNpy('float32', [1, 8, 1], new Uint8Array(Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]).buffer)).toString(
  'base64',
);

/** The entries of the worst legal put_cores_batch (1000 entries e0.., one tiny core and the worst metadata each; 63 MB of JSON). */
export function worstBatchEntries(): Array<{ key: string; cores: Array<{ data_b64: string }>; metadata: Record<string, string> }> {
  return Array.from({ length: MAX_BATCH_ENTRIES }, (_, i) => ({
    key: `e${i}`,
    cores: [{ data_b64: TINY_CORE_B64 }],
    metadata: worstMetadata(i),
  }));
}

/** A server of its own, the tenant under attack and the attacker. */
export interface Arena {
  server: TestServer;
  victim: CreatedTenant;
  attacker: CreatedTenant;
}

/** Starts a server (with `env`) and creates the victim and the attacker on it. */
export async function arena(env: Record<string, string> = {}): Promise<Arena> {
  const server = await startServer({ env });
  return { server, victim: await tenant(server), attacker: await tenant(server) };
}

/** An arena for the tests of one describe block, filled in its before hook and stopped in its after hook. */
export function scene(env: Record<string, string> = {}): Arena {
  const s = {} as Arena;
  before(async () => {
    Object.assign(s, await arena(env));
  });
  after(async () => {
    await s.server?.destroy();
  });
  return s;
}
