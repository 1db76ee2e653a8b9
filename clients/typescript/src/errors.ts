// Typed errors: every error reply of the service is a problem+json whose `code` is stable; each status
// family gets its own class so callers can catch by kind and branch on `code`.
import type { Problem } from './generated.js';

export class TtstoreError extends Error {
  override name = 'TtstoreError';
}

/** An error reply of the service (RFC 9457 problem). */
export class ApiError extends TtstoreError {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly problem: Problem & Record<string, unknown>;
  readonly retryAfterS: number | undefined;
  constructor(problem: Problem & Record<string, unknown>, status: number, retryAfterS?: number) {
    super(`${status} ${problem.code}: ${problem.detail}`);
    // The HTTP status, not the body's: a problem's extra fields may reuse the name (job_finished does).
    this.status = status;
    this.code = problem.code;
    this.problem = problem;
    this.retryAfterS = retryAfterS;
  }
}

export class BadRequestError extends ApiError {
  override name = 'BadRequestError';
}
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError';
}
export class QuotaError extends ApiError {
  override name = 'QuotaError';
}
export class ForbiddenError extends ApiError {
  override name = 'ForbiddenError';
}
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}
export class RateLimitError extends ApiError {
  override name = 'RateLimitError';
}
export class ServerError extends ApiError {
  override name = 'ServerError';
}
export class UnavailableError extends ServerError {
  override name = 'UnavailableError';
}

/** The request ran past its timeout (the caller's own AbortSignal rejects with its reason instead). */
export class TimeoutError extends TtstoreError {
  override name = 'TimeoutError';
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: QuotaError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: BadRequestError,
  415: BadRequestError,
  431: BadRequestError,
  429: RateLimitError,
  503: UnavailableError,
};

/** The typed error for an error reply of HTTP status `status`. */
export function apiError(problem: Problem & Record<string, unknown>, status: number, retryAfterS?: number): ApiError {
  const Cls = BY_STATUS[status] ?? (status >= 500 ? ServerError : ApiError);
  return new Cls(problem, status, retryAfterS);
}
