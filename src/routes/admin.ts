// Admin and onboarding routes (CONTRACT.md section 6's table), all behind adminGate (service key as
// Bearer). Bodies are JSON objects; unknown fields are 400 so a typo never passes silently.
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { koaBody } from 'koa-body';
import { notFound, unsupportedMediaType } from '../errors.js';
import type { Gate } from '../gate/index.js';
import { effectiveQuota, effectiveRateLimit } from '../gate/plans.js';
import type { TenantRecord } from '../gate/registry.js';
import * as v from './admin-validate.js';

const parseJson = koaBody({
  json: true, urlencoded: false, text: false, multipart: false, jsonLimit: '64kb', patchNode: false,
});

/** 415 for a body that is not JSON; then parse it (malformed JSON: 400 from the problem handler). */
async function jsonBody(ctx: Context, next: Next): Promise<void> {
  const hasBody = ctx.get('Transfer-Encoding') !== '' || (ctx.get('Content-Length') !== '' && ctx.get('Content-Length') !== '0');
  if (hasBody && !ctx.is('application/json', '+json')) {
    throw unsupportedMediaType('send the body as application/json');
  }
  await parseJson(ctx, next);
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function registerAdminRoutes(router: Router, gate: Gate): void {
  const { registry, meter, config, adminGate } = gate;
  const limits = (t: TenantRecord) => ({
    monthly_quota: effectiveQuota(t, config),
    rate_limit: effectiveRateLimit(t, config),
  });
  const mustExist = (id: string): TenantRecord => {
    const t = registry.get(id);
    if (!t) throw notFound(`no tenant ${id}`);
    return t;
  };
  const post = (path: string, handler: Middleware) => router.post(path, adminGate, jsonBody, handler);

  post('/gate/onboard/create', async (ctx) => {
    const body = v.objectBody(ctx.request.body, ['tenant_id', 'plan', 'namespaces', 'email', 'rate_limit', 'monthly_quota']);
    const tenantId = v.tenantId(body.tenant_id);
    const plan = v.plan(body.plan, false) ?? 'starter';
    const namespaces = v.namespaces(body.namespaces);
    const email = v.email(body.email);
    const custom = v.customLimits(plan, body);
    const { record, apiKey } = await registry.create({ tenantId, plan, namespaces, email, ...custom });
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      tenant_id: record.tenantId,
      api_key: apiKey,
      plan: record.plan,
      namespaces: record.namespaces,
      ...(record.email !== null ? { email: record.email } : {}),
      active: true,
      ...limits(record),
      created_at: record.createdAt,
    };
  });

  post('/gate/onboard/rotate-key', async (ctx) => {
    const body = v.objectBody(ctx.request.body, ['tenant_id']);
    const tenantId = v.tenantId(body.tenant_id);
    const { record, apiKey } = await registry.rotateKey(tenantId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { tenant_id: record.tenantId, api_key: apiKey, rotated_at: record.keyRotatedAt };
  });

  post('/gate/onboard/add-namespace', async (ctx) => {
    const body = v.objectBody(ctx.request.body, ['tenant_id', 'namespace']);
    const tenantId = v.tenantId(body.tenant_id);
    const namespace = v.namespace(body.namespace);
    const record = await registry.addNamespace(tenantId, namespace);
    ctx.body = { tenant_id: record.tenantId, namespaces: record.namespaces };
  });

  post('/gate/onboard/update-tier', async (ctx) => {
    const body = v.objectBody(ctx.request.body, ['tenant_id', 'plan', 'rate_limit', 'monthly_quota']);
    const tenantId = v.tenantId(body.tenant_id);
    const plan = v.plan(body.plan, true)!;
    const custom = v.customLimits(plan, body);
    const record = await registry.updateTier(tenantId, plan, custom);
    ctx.body = { tenant_id: record.tenantId, plan: record.plan, ...limits(record) };
  });

  post('/gate/admin/deactivate', async (ctx) => {
    const body = v.objectBody(ctx.request.body, ['tenant_id']);
    const tenantId = v.tenantId(body.tenant_id);
    const record = await registry.deactivate(tenantId, config.retentionDays);
    ctx.body = {
      tenant_id: record.tenantId, active: false, deactivated_at: record.deactivatedAt, purge_after: record.purgeAfter,
    };
  });

  post('/gate/admin/reload', async (ctx) => {
    v.objectBody(ctx.request.body ?? {}, []);
    const tenants = await gate.reload();
    ctx.body = { reloaded: true, tenants };
  });

  router.get('/gate/admin/tenants', adminGate, async (ctx) => {
    ctx.body = {
      tenants: registry.list().map((t) => ({
        tenant_id: t.tenantId,
        plan: t.plan,
        namespaces: t.namespaces,
        active: t.active,
        ...(t.email !== null ? { email: t.email } : {}),
        ...limits(t),
        created_at: t.createdAt,
        ...(t.active ? {} : { deactivated_at: t.deactivatedAt, purge_after: t.purgeAfter }),
      })),
    };
  });

  router.get('/gate/admin/usage', adminGate, async (ctx) => {
    const period = v.period(ctx.query.period);
    const used = await meter.usageAll(period);
    ctx.body = {
      period,
      tenants: registry.list().map((t) => {
        const quota = effectiveQuota(t, config);
        const cus = used.get(t.tenantId) ?? 0;
        return { tenant_id: t.tenantId, active: t.active, cus_used: cus, monthly_quota: quota, utilization: utilization(cus, quota) };
      }),
    };
  });

  router.get('/gate/admin/usage/:tenant_id', adminGate, async (ctx) => {
    const tenantId = v.tenantId(ctx.params.tenant_id);
    const period = v.period(ctx.query.period);
    const t = mustExist(tenantId);
    const quota = effectiveQuota(t, config);
    const u = await meter.usageOf(tenantId, period);
    ctx.body = {
      tenant_id: tenantId,
      period,
      cus_used: u.cusUsed,
      monthly_quota: quota,
      utilization: utilization(u.cusUsed, quota),
      breakdown: u.breakdown,
    };
  });

  router.get('/gate/metrics', adminGate, async (ctx) => {
    const c = gate.counters;
    const tenants = registry.list();
    const active = tenants.filter((t) => t.active).length;
    const lines = [
      '# HELP ttstore_gate_requests_total Requests that reached the tenant gate, by outcome.',
      '# TYPE ttstore_gate_requests_total counter',
      `ttstore_gate_requests_total{outcome="admitted"} ${c.admitted}`,
      `ttstore_gate_requests_total{outcome="rate_limited"} ${c.rateLimited}`,
      `ttstore_gate_requests_total{outcome="unauthenticated"} ${c.unauthenticated}`,
      '# HELP ttstore_gate_denied_total Admitted requests refused by the namespace ACL or the monthly quota.',
      '# TYPE ttstore_gate_denied_total counter',
      `ttstore_gate_denied_total{reason="namespace_forbidden"} ${c.forbidden}`,
      `ttstore_gate_denied_total{reason="quota_exceeded"} ${c.quotaExceeded}`,
      '# HELP ttstore_gate_cu_charged_total Compute units charged since this process started.',
      '# TYPE ttstore_gate_cu_charged_total counter',
      `ttstore_gate_cu_charged_total ${meter.chargedTotal}`,
      '# HELP ttstore_gate_tenants Tenants in the registry, by state.',
      '# TYPE ttstore_gate_tenants gauge',
      `ttstore_gate_tenants{state="active"} ${active}`,
      `ttstore_gate_tenants{state="inactive"} ${tenants.length - active}`,
      '',
    ];
    ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
    ctx.body = lines.join('\n');
  });
}

function utilization(cus: number, quota: number): number {
  return quota > 0 ? round6(cus / quota) : 0;
}
