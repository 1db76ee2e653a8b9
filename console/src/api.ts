// The public HTTP API as the console calls it: relative paths on this origin, the key in the header its
// role uses, and every error turned into an ApiError carrying the problem's `detail` (CONTRACT.md section 4).
import type { Session } from './session';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

/** The rate-limit headers of the last tenant answer (X-RateLimit-*), for the usage view. */
export const rateLimit = { limit: NaN, remaining: NaN, reset: NaN };

export type Json = Record<string, any>;

export interface Client {
  readonly session: Session;
  get<T = Json>(path: string): Promise<T>;
  post<T = Json>(path: string, body: unknown): Promise<T>;
  text(path: string): Promise<string>;
}

async function problemOf(res: Response): Promise<ApiError> {
  let code = 'http_error';
  let detail = `${res.status} ${res.statusText}`;
  try {
    const p = await res.json();
    if (typeof p.detail === 'string') detail = p.detail;
    if (typeof p.code === 'string') code = p.code;
  } catch {
    // not a problem document: keep the status line
  }
  return new ApiError(res.status, code, detail);
}

export function client(session: Session): Client {
  const auth: Record<string, string> =
    session.role === 'tenant' ? { 'X-Api-Key': session.key } : { Authorization: `Bearer ${session.key}` };
  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    if (!path.startsWith('/')) throw new Error(`not a path on this origin: ${path}`);
    const headers: Record<string, string> = { ...auth, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    const lim = res.headers.get('X-RateLimit-Limit');
    if (lim !== null) {
      rateLimit.limit = Number(lim);
      rateLimit.remaining = Number(res.headers.get('X-RateLimit-Remaining'));
      rateLimit.reset = Number(res.headers.get('X-RateLimit-Reset'));
    }
    if (!res.ok) throw await problemOf(res);
    return res;
  }
  return {
    session,
    get: async (path) => (await call('GET', path)).json(),
    post: async (path, body) => (await call('POST', path, body)).json(),
    text: async (path) => (await call('GET', path)).text(),
  };
}

/** The OpenAPI document (no key needed): the one published source of the solvers' parameter ranges. */
let openapi: Promise<Json> | null = null;
export function openApi(): Promise<Json> {
  openapi ??= fetch('/openapi.json', { credentials: 'omit' }).then((r) => {
    if (!r.ok) throw new ApiError(r.status, 'http_error', 'the API description could not be read');
    return r.json();
  });
  return openapi;
}

export const enc = encodeURIComponent;

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
