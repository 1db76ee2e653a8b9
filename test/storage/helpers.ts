// Shared pieces of the storage HTTP tests: a server with rate and in-flight limits out of the way, an enterprise
// tenant, and small clients for the storage endpoints.
import { expect } from 'chai';
import { decodeNpy, encodeNpy } from '../../src/codec/npy.js';
import type { DType } from '../../src/engine/types.js';
import { http, startServer, type Reply, type StartOptions, type TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/tenants.js';
import { NPY_MAX_ELEMENTS } from './npy-fixtures.js';

// The test harness waits for the 'listening' log line, so the log level stays at info.
// Tests that overlap many requests of one tenant lift its cap on engine requests in flight (the
// abuse suite tests that cap).
export const STORAGE_ENV = { SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '1000000', SVC_GATE_TENANT_INFLIGHT: '1024' };

export async function startStorageServer(opts: StartOptions = {}): Promise<TestServer> {
  return startServer({ ...opts, env: { ...STORAGE_ENV, ...opts.env } });
}

export interface Client {
  apiKey: string;
  tenantId: string;
  call<T = any>(method: string, path: string, init?: { json?: unknown; body?: any; headers?: Record<string, string> }): Promise<Reply<T>>;
  put(body: Record<string, unknown>): Promise<Reply>;
  serve(body: Record<string, unknown>, accept?: string): Promise<Reply>;
  /** serve dense as x-npy, decoded. */
  dense(
    key: string,
    opts?: { namespace?: string; version?: number },
  ): Promise<{ dtype: DType; shape: number[]; data: Buffer; headers: Headers }>;
}

/**
 * The usual setting of a storage suite, as hooks of the calling describe(): a server (rate limits out
 * of the way) before the tests, an enterprise tenant's client, the server destroyed after them.
 */
export function storageSuite(namespaces: string[] = ['default']): { readonly server: TestServer; readonly c: Client } {
  const suite = {} as { server: TestServer; c: Client };
  before(async () => {
    suite.server = await startStorageServer();
    suite.c = await tenantClient(suite.server, namespaces);
  });
  after(async () => {
    await suite.server?.destroy();
  });
  return suite;
}

export async function tenantClient(server: TestServer, namespaces: string[] = ['default']): Promise<Client> {
  const t = await createTenant(server, { plan: 'enterprise', namespaces });
  return clientFor(server, t.api_key, t.tenant_id);
}

/** A client with a known key (e.g. the same tenant against a restarted server). */
export function clientFor(server: TestServer, apiKey: string, tenantId: string): Client {
  const t = { api_key: apiKey, tenant_id: tenantId };
  const auth = { 'X-Api-Key': t.api_key };
  const call: Client['call'] = (method, path, init = {}) =>
    http(server.url, method, path, { ...init, headers: { ...auth, ...init.headers } });
  return {
    apiKey: t.api_key,
    tenantId: t.tenant_id,
    call,
    put: (body) => call('POST', '/v1/put', { json: body }),
    serve: (body, accept) => call('POST', '/v1/serve', { json: body, headers: accept ? { Accept: accept } : {} }),
    async dense(key, opts = {}) {
      const res = await fetch(`${server.url}/v1/serve`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', Accept: 'application/x-npy' },
        body: JSON.stringify({ key, ...opts }),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`serve ${key}: ${res.status} ${bytes.toString()}`);
      const a = await decodeNpy(bytes, NPY_MAX_ELEMENTS);
      return { ...a, headers: res.headers };
    },
  };
}

export function b64(buf: Uint8Array): string {
  return Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('base64');
}

/** An .npy file (v1.0, C order) of a typed array's bytes. */
export function npyOf(dtype: DType, shape: number[], data: ArrayBufferView): Buffer {
  return encodeNpy(dtype, shape, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
}

/** Bytes of a typed array as a Buffer view. */
export function bytesOf(a: ArrayBufferView): Buffer {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

export { rng } from '../helpers/prng.js';

/** A smooth float64 field on an n x n grid of [0, 1]^2 (low QTT rank). */
export function smoothField(n: number, Arr: Float64ArrayConstructor | Float32ArrayConstructor = Float64Array): Float64Array | Float32Array {
  const out = new Arr(n * n);
  for (let i = 0; i < n; i++) {
    const x = i / (n - 1);
    for (let j = 0; j < n; j++) {
      const y = j / (n - 1);
      out[i * n + j] = Math.sin(3 * x + 2 * y) + Math.exp(-x) * Math.cos(2 * y);
    }
  }
  return out;
}

/** `got` equals `want` within `rel` times the largest |want|, element by element. */
export function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, rel: number, what: string): void {
  expect(got.length, what).to.equal(want.length);
  let scale = 0;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]!));
  for (let i = 0; i < want.length; i++) expect(Math.abs(got[i]! - want[i]!), `${what}[${i}]`).to.be.at.most(rel * scale);
}
