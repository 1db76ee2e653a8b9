// The two gates, as Koa middleware put first on a route's chain.
//
// tenantGate (every /v1 route): authenticate (401) -> rate limit (429) -> hand the route an
// Authorizer (ACL 403, quota 402, called by the route after validation) -> run the route -> charge
// the reserved CU on a 2xx and release them otherwise. X-RateLimit-* go on every response of a
// request that carried a valid tenant key, errors included.
//
// adminGate (/gate/admin/*, /gate/onboard/*, /gate/metrics): the service key as Bearer only.
import type { Context, Middleware, Next } from 'koa';
import { ProblemError } from '../http/errors.js';
import type { Logger } from '../runtime/log.js';
import type { Authorizer, RequestTenant } from './context.js';
import { apiKeyHeader, bearerToken, digestsEqual, presentedTenantKey, sha256 } from './keys.js';
import { MILLI, type Meter, type Reservation } from './meter.js';
import type { GateMetrics } from './metrics.js';
import { counterSeries } from '../metrics/series.js';
import type { ChargedOperation } from './operations.js';
import { effectiveQuota, effectiveRateLimit, type GateLimitsConfig } from './plans.js';
import { RATE_STORE_RETRY_AFTER_S, RateLimiterUnavailable, type RateDecision, type RateLimiter } from './rate-limit.js';
import type { TenantRecord, TenantRegistry } from './registry.js';

const CHALLENGE = 'Bearer realm="ttstore"';

export const missingKey = (detail: string): ProblemError =>
  new ProblemError(401, 'missing_api_key', detail, {}, { 'WWW-Authenticate': CHALLENGE });
export const invalidKey = (detail: string): ProblemError =>
  new ProblemError(401, 'invalid_api_key', detail, {}, { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token"` });

export interface TenantGateDeps {
  registry: TenantRegistry;
  limiter: RateLimiter;
  meter: Meter;
  limits: GateLimitsConfig;
  log: Logger;
  metrics: GateMetrics;
}

/** What every request's Authorizer shares: the gate's dependencies and its resolved metric series. */
interface AuthorizerDeps {
  meter: Meter;
  limits: GateLimitsConfig;
  metrics: GateMetrics;
}

/**
 * ctx.state.gate of one admitted request: the ACL and quota checks, and the reservations they made
 * (charged or released by the gate once the route is done). A class, not a closure over the gate's
 * locals: one small object per request.
 */
class RequestAuthorizer implements Authorizer {
  reservations: Reservation[] | null = null;

  constructor(
    private readonly tenant: TenantRecord,
    private readonly deps: AuthorizerDeps,
  ) {}

  async authorize(namespace: string | null, op: ChargedOperation): Promise<void> {
    const { tenant, deps } = this;
    if (namespace !== null && !tenant.namespaceSet.has(namespace)) {
      deps.metrics.denied.inc({ reason: 'namespace_forbidden' });
      throw new ProblemError(403, 'namespace_forbidden', `the key of tenant ${tenant.tenantId} may not use namespace ${namespace}`, {
        namespace,
      });
    }
    let r: Reservation;
    try {
      r = await deps.meter.reserve(tenant, op, effectiveQuota(tenant, deps.limits));
    } catch (err) {
      if (err instanceof ProblemError && err.code === 'quota_exceeded') deps.metrics.denied.inc({ reason: 'quota_exceeded' });
      throw err;
    }
    (this.reservations ??= []).push(r);
  }
}

/** The RequestTenant of a tenant record, made once per record (records are immutable). */
const requestTenants = new WeakMap<TenantRecord, RequestTenant>();
function requestTenantOf(tenant: TenantRecord): RequestTenant {
  let t = requestTenants.get(tenant);
  if (!t) requestTenants.set(tenant, (t = { tenantId: tenant.tenantId, plan: tenant.plan, namespaces: tenant.namespaces }));
  return t;
}

export function createTenantGate(deps: TenantGateDeps): Middleware {
  const { registry, limiter, meter, limits, log, metrics } = deps;
  const authorizerDeps: AuthorizerDeps = { meter, limits, metrics };
  // The series every admitted request touches, resolved once (series.ts: an addition per request).
  const admitted = counterSeries(metrics.requests, { outcome: 'admitted' });

  /** The active tenant whose key the request carries; 401 without one. */
  const authenticate = (ctx: Context): TenantRecord => {
    const key = presentedTenantKey(ctx);
    if (key === null) {
      metrics.requests.inc({ outcome: 'unauthenticated' });
      throw missingKey('send the API key as X-Api-Key or Authorization: Bearer');
    }
    const tenant = registry.authenticate(key);
    if (!tenant) {
      metrics.requests.inc({ outcome: 'unauthenticated' });
      throw invalidKey('the API key is unknown, rotated out or belongs to a deactivated tenant');
    }
    return tenant;
  };

  /** X-RateLimit-* on the response, whatever the decision; 429 when the request is not admitted. */
  const admit = (ctx: Context, tenant: TenantRecord, d: RateDecision): void => {
    // On every request: straight to the response (Koa's ctx.set allocates arrays per call).
    ctx.res.setHeader('X-RateLimit-Limit', String(d.limit));
    ctx.res.setHeader('X-RateLimit-Remaining', String(d.remaining));
    ctx.res.setHeader('X-RateLimit-Reset', String(Math.ceil(d.resetAtMs / 1000)));
    if (!d.admitted) {
      metrics.requests.inc({ outcome: 'rate_limited' });
      const retryAfterS = Math.max(1, Math.ceil(d.retryAfterMs / 1000));
      throw new ProblemError(
        429,
        'rate_limited',
        `tenant ${tenant.tenantId} is over its limit of ${d.limit} requests per ${d.windowS} s; retry in ${retryAfterS} s`,
        { limit: d.limit, window_s: d.windowS, retry_after_s: retryAfterS },
        { 'Retry-After': String(retryAfterS) },
      );
    }
    admitted.inc();
  };

  /**
   * After the route: the reservations of a 2xx are charged (the promise settles once they are
   * durable, and the response waits for it), those of any other answer released (no promise).
   */
  const settle = (
    ctx: Context,
    tenant: TenantRecord,
    reservations: Reservation[] | null,
    succeeded: boolean,
  ): Promise<void> | undefined => {
    if (reservations === null) return undefined;
    if (!succeeded) {
      for (const r of reservations) meter.release(r);
      return undefined;
    }
    let milli = 0;
    for (const r of reservations) {
      milli += r.milli;
      metrics.cuCharged.add(r.op, r.milli);
    }
    ctx.state.cuCharged = milli / MILLI; // one division of an integer: the log shows 0.3, not a float sum
    return meter.charge(reservations).catch((err: unknown) => {
      log.error({ err, requestId: ctx.state.requestId, tenant_id: tenant.tenantId }, 'metering write failed');
    });
  };

  // A request that cannot be counted is refused (never admitted unlimited), as a 503 the client may retry.
  const countRequest = async (ctx: Context, tenant: TenantRecord): Promise<RateDecision> => {
    try {
      return await limiter.hit(tenant.tenantId, effectiveRateLimit(tenant, limits));
    } catch (err) {
      if (!(err instanceof RateLimiterUnavailable)) throw err;
      log.error({ err, requestId: ctx.state.requestId, tenant_id: tenant.tenantId }, 'rate-limit store unreachable');
      throw new ProblemError(
        503,
        'service_unavailable',
        `the shared rate-limit store cannot be reached; retry in ${RATE_STORE_RETRY_AFTER_S} s`,
        { retry_after_s: RATE_STORE_RETRY_AFTER_S },
        { 'Retry-After': String(RATE_STORE_RETRY_AFTER_S) },
      );
    }
  };

  return async function tenantGate(ctx: Context, next: Next): Promise<void> {
    const tenant = authenticate(ctx);
    ctx.state.tenant = requestTenantOf(tenant);
    admit(ctx, tenant, await countRequest(ctx, tenant));
    const gate = new RequestAuthorizer(tenant, authorizerDeps);
    ctx.state.gate = gate;
    let succeeded = false;
    try {
      await next();
      succeeded = ctx.status >= 200 && ctx.status < 300;
    } finally {
      const charging = settle(ctx, tenant, gate.reservations, succeeded);
      if (charging) await charging; // durable before the response leaves
    }
  };
}

export interface AdminGateDeps {
  registry: TenantRegistry;
  serviceKey: string;
}

export function createAdminGate({ registry, serviceKey }: AdminGateDeps): Middleware {
  const serviceDigest = sha256(serviceKey);
  return async function adminGate(ctx: Context, next: Next): Promise<void> {
    const bearer = bearerToken(ctx);
    if (bearer !== null && digestsEqual(sha256(bearer), serviceDigest)) {
      await next();
      return;
    }
    const xApiKey = apiKeyHeader(ctx);
    if ((bearer !== null && registry.authenticate(bearer)) || (xApiKey !== null && registry.authenticate(xApiKey))) {
      throw new ProblemError(403, 'admin_only', 'admin endpoints take the service key, not a tenant key');
    }
    if (bearer === null && xApiKey === null) {
      throw missingKey('send the service key as Authorization: Bearer <SERVICE_KEY>');
    }
    throw invalidKey('the service key is wrong (it is accepted only as Authorization: Bearer)');
  };
}
