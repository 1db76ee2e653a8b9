// Errors are values with a code (CONTRACT.md section 4): thrown once, rendered once by problemHandler.
import type { Context, Next } from 'koa';

export type ProblemCode =
  | 'invalid_request'
  | 'grid_too_small'
  | 'grid_too_large'
  | 'unknown_solver'
  | 'shape_mismatch'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'quota_exceeded'
  | 'namespace_forbidden'
  | 'admin_only'
  | 'not_found'
  | 'method_not_allowed'
  | 'tenant_exists'
  | 'not_compressed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'data_corrupted'
  | 'gpu_unsupported'
  | 'gpu_unavailable'
  | 'service_unavailable'
  | 'solver_unavailable'
  | 'storage_quota_exceeded'
  | 'job_finished'
  | 'too_many_in_flight'
  | 'too_many_jobs'
  | 'overloaded'
  | 'request_header_fields_too_large'
  | 'time_limit'
  | 'cancelled';

const TITLES: Record<ProblemCode, string> = {
  invalid_request: 'Invalid request',
  grid_too_small: 'Grid too small',
  grid_too_large: 'Grid too large',
  unknown_solver: 'Unknown solver',
  shape_mismatch: 'Shape mismatch',
  missing_api_key: 'Missing API key',
  invalid_api_key: 'Invalid API key',
  quota_exceeded: 'Monthly quota exceeded',
  namespace_forbidden: 'Namespace forbidden',
  admin_only: 'Admin only',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  tenant_exists: 'Tenant exists',
  not_compressed: 'Entry not compressed',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Rate limited',
  internal_error: 'Internal error',
  data_corrupted: 'Data corrupted',
  gpu_unsupported: 'GPU unsupported',
  gpu_unavailable: 'GPU unavailable',
  service_unavailable: 'Service unavailable',
  solver_unavailable: 'Solver unavailable',
  storage_quota_exceeded: 'Storage quota exceeded',
  job_finished: 'Job already finished',
  too_many_in_flight: 'Too many requests in flight',
  too_many_jobs: 'Too many queued jobs',
  overloaded: 'Server overloaded',
  request_header_fields_too_large: 'Request header fields too large',
  time_limit: 'Run-time budget exhausted',
  cancelled: 'Cancelled',
};

/** An error that becomes an RFC 9457 problem+json response with `status` and `code`. */
export class ProblemError extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }

  body(): Record<string, unknown> {
    return {
      type: `/problems/${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.message,
      code: this.code,
      ...this.extra,
    };
  }
}

export const badRequest = (detail: string, extra?: Record<string, unknown>): ProblemError =>
  new ProblemError(400, 'invalid_request', detail, extra);
export const notFound = (detail: string): ProblemError => new ProblemError(404, 'not_found', detail);
export const payloadTooLarge = (detail: string): ProblemError => new ProblemError(413, 'payload_too_large', detail);
export const unsupportedMediaType = (detail: string): ProblemError => new ProblemError(415, 'unsupported_media_type', detail);

/** Longest piece of a request's own text that a message quotes. */
export const EXCERPT_CHARS = 64;

/** `text` cut to EXCERPT_CHARS characters for a message (an error never echoes more of the input). */
export function excerpt(text: string): string {
  return text.length <= EXCERPT_CHARS ? text : `${text.slice(0, EXCERPT_CHARS)}...`;
}

/** A request's value for a message: a scalar as JSON, a string cut short, a structure by its kind (never walked). */
export function quoteValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(excerpt(v));
  if (v !== null && typeof v === 'object') return Array.isArray(v) ? 'a JSON array' : 'a JSON object';
  return String(JSON.stringify(v));
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Write a problem to the response (used by the handler and by middlewares that answer early). */
export function renderProblem(ctx: Context, err: ProblemError): void {
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = err.body();
}

// Errors raised with http-errors (ctx.throw, the router) carry a status (and sometimes a `type`).
function fromHttpError(err: {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  expose?: boolean;
}): ProblemError | null {
  const status = err.status ?? err.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (status === 413 || err.type === 'entity.too.large') return payloadTooLarge('request body exceeds the size limit');
  if (status === 415) return unsupportedMediaType(err.expose && err.message ? err.message : 'unsupported content type');
  if (status === 404) return notFound(err.expose && err.message ? err.message : 'not found');
  if (status === 400) {
    const what =
      err.type === 'entity.parse.failed' || /JSON|Unexpected token/i.test(err.message ?? '')
        ? 'malformed JSON body'
        : err.expose && err.message
          ? err.message
          : 'bad request';
    return badRequest(what);
  }
  return null;
}

export interface ProblemLogger {
  error(obj: object, msg: string): void;
}

/**
 * Outermost error boundary: every error leaves as problem+json; 5xx bodies never carry internals.
 * `unanswered` runs when the chain below returned without an error (the app's 404 and 405 for a
 * request no route answered): inside this middleware rather than as one more layer of its own.
 */
export function problemHandler(log: ProblemLogger, unanswered?: (ctx: Context) => void) {
  return async function problems(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      unanswered?.(ctx);
    } catch (raw) {
      let problem: ProblemError;
      if (raw instanceof ProblemError) {
        problem = raw;
      } else {
        problem =
          fromHttpError(raw as never) ??
          new ProblemError(500, 'internal_error', 'an unexpected error occurred; see the server log for this request id');
        if (problem.status >= 500) {
          log.error({ err: raw, requestId: ctx.state.requestId }, 'unhandled error');
        }
      }
      renderProblem(ctx, problem);
    }
  };
}
