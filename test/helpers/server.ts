// A real ttstore server process on a temporary data directory, for HTTP tests.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '../../src/runtime/node-flags.js';
import { testDatabase } from './pg.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.js');

export const SERVICE_KEY = 'svc_test_service_key_0123456789abcdef';

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  serviceKey: string;
  proc: ChildProcess;
  /** Every log line the process printed so far (stdout and stderr). */
  logs: string[];
  /** SIGTERM (or the given signal) and wait for exit; resolves with the exit code or signal. */
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
  /** stop() and remove the data directory. */
  destroy(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Reuse a data directory (restart tests); default: a fresh temporary one. */
  dataDir?: string;
  timeoutMs?: number;
  /** Node's command-line flags for the server process; default: the service's (npm start's). */
  nodeFlags?: readonly string[];
  /**
   * Append the process's stdout and stderr to this file, as a deployment does, instead of piping them
   * into this process, whose `logs` then holds only the lines up to "listening". For benchmarks: their
   * load generator shares this process, and reading every request line through a pipe cost it CPU and
   * a heap that grew through the run, so each configuration measured later was measured worse.
   */
  logFile?: string;
}

/** A line of the server's JSON log. */
export interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** The server's log lines so far that are JSON records (anything else it printed is skipped). */
export function logRecords(server: Pick<TestServer, 'logs'>): LogLine[] {
  return server.logs.flatMap((l) => {
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });
}

/**
 * The records matching `match` once there are at least `count` of them: request lines reach the log
 * up to REQUEST_LOG_BATCH_MS after their responses. Gives what there is after `timeoutMs`.
 */
export async function waitForLogRecords(
  server: Pick<TestServer, 'logs'>,
  match: (l: LogLine) => boolean,
  count: number,
  timeoutMs = 2000,
): Promise<LogLine[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = logRecords(server).filter(match);
    if (found.length >= count || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * TTSTORE_TEST_SERVERS_ON_POSTGRES=1 (with TTSTORE_TEST_DATABASE_URL): every test server keeps its
 * metadata in a PostgreSQL database of its own, named after its data directory (a restart finds it).
 */
const ON_POSTGRES = process.env.TTSTORE_TEST_SERVERS_ON_POSTGRES === '1';

/**
 * TTSTORE_TEST_EXTERNAL=1 (with TTSTORE_URL and TTSTORE_SERVICE_KEY, as `scripts/cluster.sh start`
 * prints them): startServer gives the server at TTSTORE_URL (nginx in front of the cluster's nodes)
 * instead of spawning one. A test that needs a server of its own is skipped, saying why: a data
 * directory of its own (restarts), Node flags, a SVC_GATE_* value this process's environment does not
 * have (the external servers are taken to run with this environment's SVC_GATE_* values), or the
 * process itself (stopping or killing it, reading its log).
 */
const EXTERNAL =
  process.env.TTSTORE_TEST_EXTERNAL === '1'
    ? { url: needVar('TTSTORE_URL').replace(/\/+$/, ''), serviceKey: needVar('TTSTORE_SERVICE_KEY') }
    : null;

function needVar(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`TTSTORE_TEST_EXTERNAL=1 needs ${name} (bash scripts/cluster.sh start prints it)`);
  return v;
}

// The runnable (test or hook) mocha is running now, so that a helper deep in a test can skip it as
// this.skip() would: mocha marks it pending and reports it skipped instead of failed.
interface MochaRunnable {
  pending: boolean;
  title: string;
}
let running: MochaRunnable | null = null;
let PendingError: new (message: string) => Error = Error;
if (EXTERNAL) {
  const lib = 'mocha/lib/';
  const [{ Runnable }, pending] = (await Promise.all([import(`${lib}runnable.js`), import(`${lib}pending.js`)])) as [
    { Runnable: { prototype: { run(this: MochaRunnable, fn: unknown): unknown } } },
    { PendingError: typeof PendingError },
  ];
  PendingError = pending.PendingError;
  const run = Runnable.prototype.run;
  const enter = (r: MochaRunnable) => (running = r);
  Runnable.prototype.run = function (this: MochaRunnable, fn: unknown) {
    enter(this);
    return run.call(this, fn);
  };
}

/** TTSTORE_URL when TTSTORE_TEST_EXTERNAL=1, else null. */
export const EXTERNAL_URL = EXTERNAL?.url ?? null;

/**
 * Skip the running test when it runs against the external server (TTSTORE_TEST_EXTERNAL=1), for a
 * reason that is not a server of its own (e.g. it asserts what a single node does at once).
 */
export function skipAgainstExternal(why: string): void {
  if (EXTERNAL) skipExternal(why, 'holds against one node only');
}

function skipExternal(why: string, what = 'needs a server of its own'): never {
  const reason = `${what} (${why}); TTSTORE_TEST_EXTERNAL=1 runs against ${EXTERNAL?.url}`;
  if (!running) throw new Error(reason);
  running.pending = true;
  process.stdout.write(`      skipped: ${running.title}: ${reason}\n`);
  throw new PendingError(reason);
}

/** What in `opts` an external server cannot give, or null. */
function privateNeed(opts: StartOptions): string | null {
  if (opts.dataDir) return 'a data directory it reuses';
  if (opts.nodeFlags) return 'Node flags';
  const differs = Object.entries(opts.env ?? {}).filter(([k, v]) => process.env[k] !== v);
  return differs.length > 0 ? differs.map(([k, v]) => `${k}=${v}`).join(' ') : null;
}

function externalServer(ext: { url: string; serviceKey: string }, opts: StartOptions): TestServer {
  const why = privateNeed(opts);
  if (why) skipExternal(why);
  return {
    url: ext.url,
    port: Number(new URL(ext.url).port),
    serviceKey: ext.serviceKey,
    get dataDir(): string {
      return skipExternal('its data directory');
    },
    get proc(): ChildProcess {
      return skipExternal('its process');
    },
    get logs(): string[] {
      return skipExternal('its log');
    },
    // In an after hook (the usual clean-up) stopping is a no-op; a test that stops the server is skipped.
    stop: async () => (running?.title.startsWith('"after') ? null : skipExternal('stopping it')),
    destroy: async () => undefined,
  };
}

/**
 * Hand what is appended to `file` past offset `at` to `onData`, every 20 ms until `done()` (then once
 * more, so that what a process printed as it exited is read too).
 */
async function followUntil(file: string, at: number, onData: (chunk: Buffer) => void, done: () => boolean): Promise<void> {
  const f = await open(file, 'r');
  try {
    for (let last = false; !last;) {
      await new Promise((r) => setTimeout(r, 20));
      last = done();
      const chunk = Buffer.alloc(Math.max(0, (await f.stat()).size - at));
      if (chunk.length === 0) continue;
      const { bytesRead } = await f.read(chunk, 0, chunk.length, at);
      at += bytesRead;
      onData(chunk.subarray(0, bytesRead));
    }
  } finally {
    await f.close();
  }
}

/** Start `node dist/src/main.js` on a free port; resolves once it logged "listening". */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  if (EXTERNAL) return externalServer(EXTERNAL, opts);
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'ttstore-test-')));
  const database = ON_POSTGRES && opts.env?.SVC_GATE_DATABASE_URL === undefined ? await testDatabase(dataDir) : undefined;
  const env = {
    ...process.env,
    SVC_GATE_HOST: '127.0.0.1',
    SVC_GATE_PORT: '0',
    SVC_GATE_DATA_DIR: dataDir,
    SVC_GATE_ENGINE_SERVICE_KEY: SERVICE_KEY,
    SVC_GATE_LOG_LEVEL: 'info',
    ...(database ? { SVC_GATE_DATABASE_URL: database.url } : {}),
    ...opts.env,
  };
  const logFile = opts.logFile === undefined ? undefined : await open(opts.logFile, 'a');
  const logFrom = logFile ? (await logFile.stat()).size : 0;
  const stdio: StdioOptions = logFile ? ['ignore', logFile.fd, logFile.fd] : ['ignore', 'pipe', 'pipe'];
  const proc = spawn(process.execPath, [...(opts.nodeFlags ?? SERVICE_NODE_FLAGS), MAIN], { env, stdio });
  await logFile?.close(); // the child holds its own copy of the descriptor
  const logs: string[] = [];
  const exited = new Promise<number | string | null>((resolve) => proc.once('exit', (code, sig) => resolve(code ?? sig)));

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in time:\n${logs.join('\n')}`)), opts.timeoutMs ?? 20000);
    // Lines are kept as they come; only those before "listening" are parsed (a benchmark's client
    // shares this process, and parsing every request line cost it more than its own requests).
    let buf = '';
    let listening = false;
    const onData = (chunk: Buffer) => {
      const lines = (buf + chunk.toString('utf8')).split('\n');
      buf = lines.pop()!;
      for (const line of lines) {
        logs.push(line);
        if (listening) continue;
        try {
          const rec = JSON.parse(line) as { msg?: string; port?: number };
          if (rec.msg === 'listening' && typeof rec.port === 'number') {
            listening = true;
            clearTimeout(timer);
            resolve(rec.port);
          }
        } catch {
          /* not JSON */
        }
      }
    };
    if (opts.logFile === undefined) {
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', (c: Buffer) => logs.push(...c.toString('utf8').split('\n').filter(Boolean)));
    } else void followUntil(opts.logFile, logFrom, onData, () => listening || proc.exitCode !== null || proc.signalCode !== null);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${logs.join('\n')}`));
    });
  });

  const server: TestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    serviceKey: env.SVC_GATE_ENGINE_SERVICE_KEY,
    proc,
    logs,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
    async destroy() {
      await server.stop();
      if (!opts.dataDir) {
        await rm(dataDir, { recursive: true, force: true });
        await database?.drop();
      }
    },
  };
  return server;
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** fetch with a JSON body (when `json` is given) and a parsed JSON reply (when it is JSON). */
export async function http<T = any>(
  base: string,
  method: string,
  urlPath: string,
  init: { json?: unknown; body?: RequestInit['body']; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + urlPath, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  if (/json/.test(res.headers.get('content-type') ?? '')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      /* keep text */
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}
