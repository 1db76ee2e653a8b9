// A real ttstore server process on a temporary data directory, for HTTP tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
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
 * TTSTORE_TEST_SERVERS_ON_POSTGRES=1 (with TTSTORE_TEST_DATABASE_URL): every test server keeps its
 * metadata in a PostgreSQL database of its own, named after its data directory (a restart finds it).
 */
const ON_POSTGRES = process.env.TTSTORE_TEST_SERVERS_ON_POSTGRES === '1';

/** Start `node dist/src/main.js` on a free port; resolves once it logged "listening". */
export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
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
  const proc = spawn(process.execPath, [...(opts.nodeFlags ?? SERVICE_NODE_FLAGS), MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => logs.push(...c.toString('utf8').split('\n').filter(Boolean)));
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
