// Admin and onboarding routes (CONTRACT.md section 6's table), all behind adminGate (service key as
// Bearer), each mounted from its description in ./endpoints.ts. Bodies are JSON objects validated
// by the same schemas; unknown fields are 400 so a typo never passes silently.
import { notFound } from '../../http/errors.js';
import type { Gate } from '../../gate/index.js';
import { periodOf } from '../../gate/meter.js';
import { effectiveQuota, effectiveRateLimit, effectiveStorageQuota } from '../../gate/plans.js';
import type { TenantRecord } from '../../gate/registry.js';
import {
  ADMIN_ENDPOINTS as EP,
  addNamespaceBody,
  createBody,
  periodQuery,
  reloadBody,
  tenantOnlyBody,
  updateTierBody,
} from './endpoints.js';
import type { Api } from '../../http/endpoint.js';
import { parseBody, parseParams } from '../../http/schema/validate.js';
import { customLimits } from './custom-limits.js';
import { storageUsage, usageRecord, utilization, type StoredBytes } from './usage.js';

/** What other features do when an admin route changes a tenant (wired by the composition root). */
export interface AdminHooks {
  /** After a deactivation committed (the tenant's simulation jobs are cancelled); not awaited. */
  onDeactivated?(tenantId: string): void;
}

export function registerAdminRoutes(api: Api, gate: Gate, storage: StoredBytes, hooks: AdminHooks = {}): void {
  const { registry, meter, config } = gate;
  const limits = (t: TenantRecord) => ({
    monthly_quota: effectiveQuota(t, config),
    rate_limit: effectiveRateLimit(t, config),
    storage_quota_bytes: effectiveStorageQuota(t, config),
  });
  const mustExist = (id: string): TenantRecord => {
    const t = registry.get(id);
    if (!t) throw notFound(`no tenant ${id}`);
    return t;
  };

  api.mount(EP.create_tenant, async (ctx) => {
    const body = parseBody(createBody, ctx.request.body);
    const tenantId = body.tenant_id;
    const plan = body.plan ?? 'starter';
    const namespaces = body.namespaces ?? ['default'];
    const email = body.email ?? null;
    const custom = customLimits(plan, body);
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

  api.mount(EP.rotate_key, async (ctx) => {
    const { tenant_id: tenantId } = parseBody(tenantOnlyBody, ctx.request.body);
    const { record, apiKey } = await registry.rotateKey(tenantId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { tenant_id: record.tenantId, api_key: apiKey, rotated_at: record.keyRotatedAt };
  });

  api.mount(EP.add_namespace, async (ctx) => {
    const { tenant_id: tenantId, namespace } = parseBody(addNamespaceBody, ctx.request.body);
    const record = await registry.addNamespace(tenantId, namespace);
    ctx.body = { tenant_id: record.tenantId, namespaces: record.namespaces };
  });

  api.mount(EP.update_tier, async (ctx) => {
    const body = parseBody(updateTierBody, ctx.request.body);
    const tenantId = body.tenant_id;
    const plan = body.plan;
    const custom = customLimits(plan, body);
    const record = await registry.updateTier(tenantId, plan, custom);
    ctx.body = { tenant_id: record.tenantId, plan: record.plan, ...limits(record) };
  });

  api.mount(EP.deactivate, async (ctx) => {
    const { tenant_id: tenantId } = parseBody(tenantOnlyBody, ctx.request.body);
    const record = await registry.deactivate(tenantId, config.retentionDays);
    hooks.onDeactivated?.(tenantId);
    ctx.body = {
      tenant_id: record.tenantId,
      active: false,
      deactivated_at: record.deactivatedAt,
      purge_after: record.purgeAfter,
    };
  });

  api.mount(EP.reload, async (ctx) => {
    parseBody(reloadBody, ctx.request.body ?? {});
    const tenants = await gate.reload();
    ctx.body = { reloaded: true, tenants };
  });

  api.mount(EP.tenants, async (ctx) => {
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

  api.mount(EP.usage_all, async (ctx) => {
    const period = parseParams(periodQuery, ctx.query).period ?? periodOf();
    const used = await meter.usageAll(period);
    const stored = await storage.reportedBytesAll();
    ctx.body = {
      period,
      tenants: registry.list().map((t) => {
        const quota = effectiveQuota(t, config);
        const cus = used.get(t.tenantId) ?? 0;
        return {
          tenant_id: t.tenantId,
          active: t.active,
          cus_used: cus,
          monthly_quota: quota,
          utilization: utilization(cus, quota),
          ...storageUsage(gate, stored.get(t.tenantId) ?? 0, t),
        };
      }),
    };
  });

  api.mount(EP.usage_tenant, async (ctx) => {
    const tenantId = parseParams(EP.usage_tenant.pathParams, ctx.params, ['tenant_id']).tenant_id;
    const period = parseParams(periodQuery, ctx.query).period ?? periodOf();
    ctx.body = await usageRecord(gate, storage, mustExist(tenantId), period);
  });
}
