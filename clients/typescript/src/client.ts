// The typed client: one method per operation of the API, each taking and answering the types generated
// from the OpenAPI document. Arrays travel as binary .npy bodies; 429 and 503 are retried (retry.ts).
import { apiError, TimeoutError, TtstoreError } from './errors.js';
import {
  OPERATIONS,
  type OperationId,
  type OperationTypes,
  type Problem,
  type PutQuery,
  type ServeRequest,
  type ListResponse,
  type SearchRequest,
  type SearchResponse,
  type SimulationStatusResponse,
  type SimulationSubmitRequest,
  type SimulationListQuery,
  type UsageAllQuery,
} from './generated.js';
import { decodeNpy, encodeNpy, isNpy, type NdArray } from './npy.js';
import { backoffMs, DEFAULT_RETRY, retryAfterSeconds, RETRY_STATUSES, sleep, type RetryPolicy } from './retry.js';

export interface Progress {
  /** Bytes moved so far. */
  loaded: number;
  /** Bytes in all, when known. */
  total: number | undefined;
}

export interface RetryEvent {
  operation: OperationId;
  attempt: number;
  status: number;
  code: string | undefined;
  retryAfterS: number | undefined;
  waitMs: number;
}

export interface ClientOptions {
  /** Base URL of the service, e.g. http://127.0.0.1:8080 (default: TTSTORE_URL). */
  url?: string;
  /** A tenant API key for /v1 (default: TTSTORE_API_KEY). */
  apiKey?: string;
  /** The service key for /gate/onboard and /gate/admin (default: TTSTORE_SERVICE_KEY). */
  serviceKey?: string;
  /** Default namespace (default: "default"). */
  namespace?: string;
  retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout in ms (default 120000; 0 for none). */
  timeoutMs?: number;
  /** Called before each retry's wait. */
  onRetry?: (e: RetryEvent) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  onUploadProgress?: (p: Progress) => void;
  onDownloadProgress?: (p: Progress) => void;
}

type Body<Op extends OperationId> = OperationTypes[Op]['body'];
type Reply<Op extends OperationId> = OperationTypes[Op]['response'];
type Query<Op extends OperationId> = OperationTypes[Op]['query'];

interface Send {
  path?: Record<string, string | number>;
  query?: Record<string, unknown>;
  json?: unknown;
  bytes?: Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  accept?: string;
}

export interface PutOptions extends CallOptions, Omit<PutQuery, 'key'> {
  /** Metadata stored with the entry (X-Ttstore-Metadata). */
  metadata?: Record<string, unknown>;
}

/** A dense serve in binary: the array (or a blob's bytes) and what the headers say about it. */
export interface Served {
  key: string;
  namespace: string;
  version: number;
  kind: string;
  verdict: string;
  dtype: string;
  shape: number[];
  /** The array; a blob comes back as a 1-D uint8 array of its bytes. */
  array: NdArray;
}

/** Names of the client's method for each operation; a test checks that it covers the OpenAPI document. */
export const METHOD_OF: Record<OperationId, keyof TtstoreClient> = {
  put: 'put',
  put_cores: 'putCores',
  put_cores_batch: 'putCoresBatch',
  get: 'get',
  serve: 'serve',
  delete: 'delete',
  list: 'list',
  similarity: 'similarity',
  topk: 'topk',
  topk_vector: 'topkVector',
  search: 'search',
  simulation_submit: 'submitSimulation',
  simulation_status: 'simulationStatus',
  simulation_cancel: 'cancelSimulation',
  simulation_list: 'listSimulations',
  own_usage: 'ownUsage',
  own_namespaces: 'namespaces',
  create_tenant: 'createTenant',
  rotate_key: 'rotateKey',
  add_namespace: 'addNamespace',
  update_tier: 'updateTier',
  deactivate: 'deactivate',
  reload: 'reload',
  tenants: 'tenants',
  usage_all: 'usage',
  usage_tenant: 'tenantUsage',
  metrics: 'metrics',
  health: 'health',
  openapi: 'openapi',
  docs: 'docs',
  root: 'root',
  console: 'console',
  console_asset: 'consoleAsset',
};

const UPLOAD_CHUNK = 64 * 1024;

export class TtstoreClient {
  readonly url: string;
  readonly namespace: string;
  private readonly apiKey: string | undefined;
  private readonly serviceKey: string | undefined;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly onRetry: ((e: RetryEvent) => void) | undefined;

  constructor(opts: ClientOptions = {}) {
    const url = opts.url ?? process.env.TTSTORE_URL;
    if (url === undefined || url === '') throw new TtstoreError('no service URL: pass url or set TTSTORE_URL');
    this.url = url.replace(/\/+$/, '');
    this.apiKey = opts.apiKey ?? process.env.TTSTORE_API_KEY;
    this.serviceKey = opts.serviceKey ?? process.env.TTSTORE_SERVICE_KEY;
    this.namespace = opts.namespace ?? 'default';
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.onRetry = opts.onRetry;
  }

  // ---- storage ----

  /** Store an array (sent as .npy) or a blob (raw bytes that are not an .npy). */
  async put(key: string, data: NdArray | Uint8Array, opts: PutOptions = {}): Promise<Reply<'put'>> {
    const { signal, timeoutMs, onUploadProgress, onDownloadProgress, metadata, ...query } = opts;
    const bytes = data instanceof Uint8Array ? data : encodeNpy(data);
    const headers: Record<string, string> = {};
    if (metadata !== undefined) headers['X-Ttstore-Metadata'] = JSON.stringify(metadata);
    const contentType = data instanceof Uint8Array && !isNpy(data) ? 'application/octet-stream' : 'application/x-npy';
    const res = await this.send(
      'put',
      { query: { namespace: this.namespace, ...query, key }, bytes, contentType, headers },
      { signal, timeoutMs, onUploadProgress, onDownloadProgress },
    );
    return (await res.json()) as Reply<'put'>;
  }

  putCores(body: Body<'put_cores'>, opts?: CallOptions): Promise<Reply<'put_cores'>> {
    return this.json('put_cores', { json: this.ns(body) }, opts);
  }

  putCoresBatch(body: Body<'put_cores_batch'>, opts?: CallOptions): Promise<Reply<'put_cores_batch'>> {
    return this.json('put_cores_batch', { json: this.ns(body) }, opts);
  }

  get(key: string, opts: CallOptions & { namespace?: string; version?: number } = {}): Promise<Reply<'get'>> {
    const { namespace = this.namespace, version, ...call } = opts;
    return this.json('get', { path: { namespace, key }, query: { version } }, call);
  }

  /** The dense array of an entry, downloaded as a binary .npy (no base64). */
  async serve(key: string, opts: CallOptions & Omit<ServeRequest, 'key' | 'target' | 'device'> = {}): Promise<Served> {
    const { signal, timeoutMs, onUploadProgress, onDownloadProgress, ...req } = opts;
    const res = await this.send(
      'serve',
      { json: { namespace: this.namespace, ...req, key, target: 'dense' }, accept: 'application/x-npy' },
      { signal, timeoutMs, onUploadProgress },
    );
    const bytes = await readBody(res, onDownloadProgress);
    const h = res.headers;
    const array: NdArray = isNpy(bytes) ? decodeNpy(bytes) : { dtype: 'uint8', shape: [bytes.length], data: bytes };
    return {
      key: decodeURIComponent(h.get('x-ttstore-key') ?? encodeURIComponent(key)),
      namespace: h.get('x-ttstore-namespace') ?? req.namespace ?? this.namespace,
      version: Number(h.get('x-ttstore-version')),
      kind: h.get('x-ttstore-kind') ?? '',
      verdict: h.get('x-ttstore-verdict') ?? '',
      dtype: h.get('x-ttstore-dtype') ?? array.dtype,
      shape: array.shape,
      array,
    };
  }

  /** serve as JSON: target cores (the tensor train) or gpu, or dense as data_b64. */
  serveJson(body: Body<'serve'>, opts?: CallOptions): Promise<Reply<'serve'>> {
    return this.json('serve', { json: this.ns(body) }, opts);
  }

  delete(key: string, opts: CallOptions & { namespace?: string } = {}): Promise<Reply<'delete'>> {
    const { namespace = this.namespace, ...call } = opts;
    return this.json('delete', { path: { namespace, key } }, call);
  }

  /** One page of keys. */
  list(namespace = this.namespace, query: Omit<Query<'list'>, 'namespace'> = {}, opts?: CallOptions): Promise<ListResponse> {
    return this.json('list', { path: { namespace }, query }, opts);
  }

  /** Every key under a prefix, page after page. */
  async *listAll(
    namespace = this.namespace,
    query: Omit<Query<'list'>, 'namespace' | 'offset'> = {},
    opts?: CallOptions,
  ): AsyncGenerator<NonNullable<ListResponse['keys']>[number]> {
    yield* pages((offset) => this.list(namespace, { ...query, offset }, opts).then((p) => ({ items: p.keys ?? [], total: p.total })));
  }

  // ---- queries ----

  similarity(body: Body<'similarity'>, opts?: CallOptions): Promise<Reply<'similarity'>> {
    return this.json('similarity', { json: this.ns(body) }, opts);
  }

  topk(body: Body<'topk'>, opts?: CallOptions): Promise<Reply<'topk'>> {
    return this.json('topk', { json: this.ns(body) }, opts);
  }

  /** Top-K by a query vector, given as an array (or as data_b64, an .npy in base64, the wire form). */
  topkVector(
    body: Body<'topk_vector'> | (Omit<Body<'topk_vector'>, 'data_b64'> & { vector: NdArray }),
    opts?: CallOptions,
  ): Promise<Reply<'topk_vector'>> {
    const wire =
      'vector' in body ? (({ vector, ...rest }) => ({ ...rest, data_b64: Buffer.from(encodeNpy(vector)).toString('base64') }))(body) : body;
    return this.json('topk_vector', { json: this.ns(wire) }, opts);
  }

  search(body: SearchRequest, opts?: CallOptions): Promise<SearchResponse> {
    return this.json('search', { json: this.ns(body) }, opts);
  }

  /** Every match of a metadata search, page after page. */
  async *searchAll(
    body: Omit<SearchRequest, 'offset'>,
    opts?: CallOptions,
  ): AsyncGenerator<NonNullable<SearchResponse['results']>[number]> {
    yield* pages((offset) => this.search({ ...body, offset }, opts).then((p) => ({ items: p.results ?? [], total: p.total })));
  }

  // ---- simulations ----

  submitSimulation(body: SimulationSubmitRequest, opts?: CallOptions): Promise<Reply<'simulation_submit'>> {
    return this.json('simulation_submit', { json: this.ns(body) }, opts);
  }

  simulationStatus(jobId: string, opts?: CallOptions): Promise<Reply<'simulation_status'>> {
    return this.json('simulation_status', { path: { job_id: jobId } }, opts);
  }

  cancelSimulation(jobId: string, opts?: CallOptions): Promise<Reply<'simulation_cancel'>> {
    return this.json('simulation_cancel', { path: { job_id: jobId } }, opts);
  }

  listSimulations(query: SimulationListQuery = {}, opts?: CallOptions): Promise<Reply<'simulation_list'>> {
    return this.json('simulation_list', { query }, opts);
  }

  /** Poll a job until it completes or fails; onStatus sees each status (its progress). */
  async waitForSimulation(
    jobId: string,
    opts: CallOptions & { intervalMs?: number; onStatus?: (s: SimulationStatusResponse) => void } = {},
  ): Promise<SimulationStatusResponse> {
    const { intervalMs = 250, onStatus, ...call } = opts;
    for (;;) {
      const s = await this.simulationStatus(jobId, call);
      onStatus?.(s);
      if (s.status === 'completed' || s.status === 'failed') return s;
      await sleep(intervalMs, call.signal);
    }
  }

  // ---- operator (service key) ----

  createTenant(body: Body<'create_tenant'>, opts?: CallOptions): Promise<Reply<'create_tenant'>> {
    return this.json('create_tenant', { json: body }, opts);
  }

  rotateKey(body: Body<'rotate_key'>, opts?: CallOptions): Promise<Reply<'rotate_key'>> {
    return this.json('rotate_key', { json: body }, opts);
  }

  addNamespace(body: Body<'add_namespace'>, opts?: CallOptions): Promise<Reply<'add_namespace'>> {
    return this.json('add_namespace', { json: body }, opts);
  }

  updateTier(body: Body<'update_tier'>, opts?: CallOptions): Promise<Reply<'update_tier'>> {
    return this.json('update_tier', { json: body }, opts);
  }

  deactivate(body: Body<'deactivate'>, opts?: CallOptions): Promise<Reply<'deactivate'>> {
    return this.json('deactivate', { json: body }, opts);
  }

  reload(body: Body<'reload'> = {}, opts?: CallOptions): Promise<Reply<'reload'>> {
    return this.json('reload', { json: body }, opts);
  }

  /** The caller's own usage record (the tenant key's; free). */
  ownUsage(query: Query<'own_usage'> = {}, opts?: CallOptions): Promise<Reply<'own_usage'>> {
    return this.json('own_usage', { query }, opts);
  }

  /** The caller's namespaces and what its key may do in each (free). */
  namespaces(opts?: CallOptions): Promise<Reply<'own_namespaces'>> {
    return this.json('own_namespaces', {}, opts);
  }

  tenants(opts?: CallOptions): Promise<Reply<'tenants'>> {
    return this.json('tenants', {}, opts);
  }

  usage(query: UsageAllQuery = {}, opts?: CallOptions): Promise<Reply<'usage_all'>> {
    return this.json('usage_all', { query }, opts);
  }

  tenantUsage(tenantId: string, query: Omit<Query<'usage_tenant'>, 'tenant_id'> = {}, opts?: CallOptions): Promise<Reply<'usage_tenant'>> {
    return this.json('usage_tenant', { path: { tenant_id: tenantId }, query }, opts);
  }

  async metrics(opts?: CallOptions): Promise<string> {
    return (await this.send('metrics', {}, opts)).text();
  }

  // ---- public ----

  health(opts?: CallOptions): Promise<Reply<'health'>> {
    return this.json('health', {}, opts);
  }

  openapi(opts?: CallOptions): Promise<Reply<'openapi'>> {
    return this.json('openapi', {}, opts);
  }

  async docs(opts?: CallOptions): Promise<string> {
    return (await this.send('docs', {}, opts)).text();
  }

  root(opts?: CallOptions): Promise<Reply<'root'>> {
    return this.json('root', {}, opts);
  }

  /** The web console's page (HTML, for a browser). */
  async console(opts?: CallOptions): Promise<string> {
    return (await this.send('console', {}, opts)).text();
  }

  /** A file of the console's build, by the name its page gives. */
  async consoleAsset(file: string, opts?: CallOptions): Promise<Uint8Array> {
    return new Uint8Array(await (await this.send('console_asset', { path: { file } }, opts)).arrayBuffer());
  }

  // ---- transport ----

  private ns<T>(body: T): T {
    return { namespace: this.namespace, ...body };
  }

  private async json<T>(op: OperationId, send: Send, opts?: CallOptions): Promise<T> {
    const res = await this.send(op, send, opts);
    return (await res.json()) as T;
  }

  /** Send an operation, retrying 429 and 503; resolves with its success response or throws a typed error. */
  private async send(op: OperationId, s: Send, opts: CallOptions = {}): Promise<Response> {
    const spec = OPERATIONS[op];
    let url = this.url + spec.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(s.path?.[name])));
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(s.query ?? {})) if (v !== undefined && v !== null) q.set(k, String(v));
    if ([...q].length > 0) url += `?${q.toString()}`;
    const headers: Record<string, string> = { ...s.headers };
    const key = spec.auth === 'service' ? this.serviceKey : spec.auth === 'tenant' ? this.apiKey : undefined;
    if (key !== undefined && key !== '') headers.Authorization = `Bearer ${key}`;
    if (s.accept !== undefined) headers.Accept = s.accept;
    let payload: Uint8Array | undefined;
    if (s.json !== undefined) {
      payload = Buffer.from(JSON.stringify(s.json));
      headers['Content-Type'] = 'application/json';
    } else if (s.bytes !== undefined) {
      payload = s.bytes;
      headers['Content-Type'] = s.contentType ?? 'application/octet-stream';
    }
    for (let attempt = 0; ; attempt++) {
      const res = await this.attempt(url, spec.method, headers, payload, opts);
      if (res.status === spec.success || (res.ok && res.status !== 304)) return res;
      const problem = await readProblem(res);
      const retryAfterS = retryAfterSeconds(res.headers.get('retry-after'));
      const err = apiError(problem, res.status, retryAfterS);
      const wait = RETRY_STATUSES.has(res.status) ? backoffMs(this.retry, attempt, retryAfterS) : undefined;
      if (wait === undefined) throw err;
      this.onRetry?.({ operation: op, attempt, status: res.status, code: problem.code, retryAfterS, waitMs: wait });
      await sleep(wait, opts.signal);
    }
  }

  private async attempt(
    url: string,
    method: string,
    headers: Record<string, string>,
    payload: Uint8Array | undefined,
    opts: CallOptions,
  ): Promise<Response> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    const signals = [opts.signal, timeout].filter((x): x is AbortSignal => x !== undefined);
    const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
    let body: RequestInit['body'] = payload;
    const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
    if (payload !== undefined && opts.onUploadProgress !== undefined) {
      body = uploadStream(payload, opts.onUploadProgress);
      init.duplex = 'half';
      headers = { ...headers, 'Content-Length': String(payload.byteLength) };
      init.headers = headers;
    }
    init.body = body;
    try {
      return await fetch(url, init);
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (timeout?.aborted) throw new TimeoutError(`${method} ${url} took over ${timeoutMs} ms`);
      throw e;
    }
  }
}

/** Walks offset-paged results until total is reached or a page comes back empty. */
async function* pages<T>(page: (offset: number) => Promise<{ items: T[]; total: number | undefined }>): AsyncGenerator<T> {
  let offset = 0;
  for (;;) {
    const { items, total } = await page(offset);
    yield* items;
    offset += items.length;
    if (items.length === 0 || (total !== undefined && offset >= total)) return;
  }
}

function uploadStream(bytes: Uint8Array, onProgress: (p: Progress) => void): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) {
        controller.close();
        return;
      }
      const chunk = bytes.subarray(at, at + UPLOAD_CHUNK);
      at += chunk.byteLength;
      controller.enqueue(chunk);
      onProgress({ loaded: at, total: bytes.byteLength });
    },
  });
}

async function readBody(res: Response, onProgress?: (p: Progress) => void): Promise<Uint8Array> {
  if (onProgress === undefined || res.body === null) return new Uint8Array(await res.arrayBuffer());
  const length = res.headers.get('content-length');
  const total = length === null ? undefined : Number(length);
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    loaded += chunk.byteLength;
    onProgress({ loaded, total });
  }
  return Buffer.concat(chunks);
}

async function readProblem(res: Response): Promise<Problem & Record<string, unknown>> {
  const text = await res.text();
  try {
    const p = JSON.parse(text) as Problem & Record<string, unknown>;
    if (typeof p.code === 'string') return p;
  } catch {
    /* not a problem body */
  }
  return { type: 'about:blank', title: res.statusText, status: res.status, detail: text.slice(0, 200), code: `http_${res.status}` };
}
