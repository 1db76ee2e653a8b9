// Validation of admin and onboarding request bodies (CONTRACT.md sections 1, 5 and 6). Each
// function returns trusted, typed values or throws 400 invalid_request naming the field.
import { badRequest } from '../errors.js';
import { PLANS, type Plan } from '../gate/context.js';
import { PERIOD_RE, periodOf } from '../gate/meter.js';
import type { RateLimit } from '../gate/plans.js';

export const TENANT_ID_RE = /^[a-z0-9][a-z0-9_-]{1,62}$/;
export const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,253}$/;
const MAX_NAMESPACES = 1000;
export const MAX_RATE_LIMIT_REQUESTS = 10_000_000;
export const MAX_RATE_LIMIT_WINDOW_S = 86_400;
export const MAX_MONTHLY_QUOTA = 1e15;

type Body = Record<string, unknown>;

export function objectBody(raw: unknown, allowed: readonly string[]): Body {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('the body must be a JSON object');
  const body = raw as Body;
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw badRequest(`unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`, { fields: unknown });
  }
  return body;
}

export function tenantId(value: unknown, field = 'tenant_id'): string {
  if (value === undefined) throw badRequest(`${field} is required`, { field });
  if (typeof value !== 'string' || !TENANT_ID_RE.test(value)) {
    throw badRequest(`${field} must match ${TENANT_ID_RE.source}`, { field });
  }
  return value;
}

export function plan(value: unknown, required: boolean): Plan | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !(PLANS as readonly string[]).includes(value)) {
    throw badRequest(`plan must be one of ${PLANS.join(', ')}`, { field: 'plan' });
  }
  return value as Plan;
}

export function namespace(value: unknown, field = 'namespace'): string {
  if (value === undefined) throw badRequest(`${field} is required`, { field });
  if (typeof value !== 'string' || !NAMESPACE_RE.test(value)) {
    throw badRequest(`${field} must match ${NAMESPACE_RE.source}`, { field });
  }
  return value;
}

/** A non-empty list of valid namespaces, duplicates dropped, order kept; default ["default"]. */
export function namespaces(value: unknown): string[] {
  if (value === undefined) return ['default'];
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_NAMESPACES) {
    throw badRequest(`namespaces must be a list of 1 to ${MAX_NAMESPACES} namespace names`, { field: 'namespaces' });
  }
  return [...new Set(value.map((v, i) => namespace(v, `namespaces[${i}]`)))];
}

export function email(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length > 254 || !EMAIL_RE.test(value)) {
    throw badRequest('email must be an email address', { field: 'email' });
  }
  return value;
}

function intIn(value: unknown, min: number, max: number, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw badRequest(`${field} must be an integer in [${min}, ${max}]`, { field });
  }
  return value;
}

export function rateLimit(value: unknown): RateLimit | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('rate_limit must be an object {requests, window_s}', { field: 'rate_limit' });
  }
  const v = value as Body;
  const extra = Object.keys(v).filter((k) => k !== 'requests' && k !== 'window_s');
  if (extra.length > 0) throw badRequest(`rate_limit takes only requests and window_s, not ${extra.join(', ')}`, { field: 'rate_limit' });
  return {
    requests: intIn(v.requests, 1, MAX_RATE_LIMIT_REQUESTS, 'rate_limit.requests'),
    window_s: intIn(v.window_s, 1, MAX_RATE_LIMIT_WINDOW_S, 'rate_limit.window_s'),
  };
}

export function monthlyQuota(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_MONTHLY_QUOTA) {
    throw badRequest(`monthly_quota must be a number of CU in [0, ${MAX_MONTHLY_QUOTA}]`, { field: 'monthly_quota' });
  }
  return value;
}

/** Custom limits are an enterprise term (CONTRACT.md section 5). */
export function customLimits(p: Plan, body: Body): { rateLimit?: RateLimit; monthlyQuota?: number } {
  const rl = rateLimit(body.rate_limit);
  const q = monthlyQuota(body.monthly_quota);
  if ((rl !== undefined || q !== undefined) && p !== 'enterprise') {
    throw badRequest(`rate_limit and monthly_quota can be set only with plan enterprise (the ${p} plan fixes them)`,
      { field: rl !== undefined ? 'rate_limit' : 'monthly_quota' });
  }
  return { ...(rl !== undefined ? { rateLimit: rl } : {}), ...(q !== undefined ? { monthlyQuota: q } : {}) };
}

/** ?period=YYYY-MM, default the current UTC month. */
export function period(value: unknown): string {
  if (value === undefined) return periodOf();
  if (typeof value !== 'string' || !PERIOD_RE.test(value)) {
    throw badRequest('period must be a month shaped like YYYY-MM', { field: 'period' });
  }
  return value;
}
