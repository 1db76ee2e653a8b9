// Tenants for HTTP tests, made through the real onboarding endpoint with the service key.
import { randomBytes } from 'node:crypto';
import { EXTERNAL_URL, http, type Reply } from './server.js';

export interface ServerLike {
  url: string;
  serviceKey: string;
}

export interface TenantOptions {
  /** Default: a fresh random id. */
  tenant_id?: string;
  /**
   * Default: 'enterprise' with a generous custom rate limit (100000 per 60 s) and quota (1e9 CU),
   * so tests that are not about limits never meet them. Give a plan to get that plan's own terms.
   */
  plan?: 'starter' | 'builder' | 'pro' | 'enterprise';
  namespaces?: string[];
  email?: string;
  /** Enterprise only (the plan defaults to enterprise when either is given). */
  rate_limit?: { requests: number; window_s: number };
  monthly_quota?: number;
}

export interface CreatedTenant {
  tenant_id: string;
  api_key: string;
  plan: string;
  namespaces: string[];
  monthly_quota: number;
  rate_limit: { requests: number; window_s: number };
  active: boolean;
  created_at: number;
  email?: string;
}

export function randomTenantId(prefix = 't'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** Headers that authenticate as the service key. */
export function adminHeaders(server: ServerLike): Record<string, string> {
  return { Authorization: `Bearer ${server.serviceKey}` };
}

/** Call an admin endpoint with the service key. */
export function admin<T = any>(server: ServerLike, method: string, path: string, json?: unknown): Promise<Reply<T>> {
  return http<T>(server.url, method, path, { json, headers: adminHeaders(server) });
}

/** POST /gate/onboard/create; throws unless 201. */
export async function createTenant(server: ServerLike, opts: TenantOptions = {}): Promise<CreatedTenant> {
  const custom = opts.rate_limit !== undefined || opts.monthly_quota !== undefined;
  const body: Record<string, unknown> = { tenant_id: opts.tenant_id ?? randomTenantId() };
  if (opts.plan === undefined && !custom) {
    body.plan = 'enterprise';
    body.rate_limit = { requests: 100_000, window_s: 60 };
    body.monthly_quota = 1e9;
  } else {
    body.plan = opts.plan ?? 'enterprise';
    if (opts.rate_limit !== undefined) body.rate_limit = opts.rate_limit;
    if (opts.monthly_quota !== undefined) body.monthly_quota = opts.monthly_quota;
  }
  if (opts.namespaces !== undefined) body.namespaces = opts.namespaces;
  if (opts.email !== undefined) body.email = opts.email;
  const r = await admin<CreatedTenant>(server, 'POST', '/gate/onboard/create', body);
  if (r.status !== 201) throw new Error(`createTenant: ${r.status} ${r.text}`);
  // Behind a balancer the next request may reach another node, which learns of the tenant within the
  // contract's second (milliseconds in practice).
  if (server.url === EXTERNAL_URL) await new Promise((res) => setTimeout(res, 250));
  return r.body;
}

/** Headers that authenticate as a tenant (X-Api-Key). */
export function tenantHeaders(t: { api_key: string }): Record<string, string> {
  return { 'X-Api-Key': t.api_key };
}
