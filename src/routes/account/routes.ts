// GET /v1/usage and GET /v1/namespaces: a tenant's own records, behind the tenant gate (authenticated
// and rate limited like any request). Neither reserves CU: both are free and answered past the quota.
import type { Gate } from '../../gate/index.js';
import { gateOf } from '../../gate/context.js';
import { periodOf } from '../../gate/meter.js';
import { NAMESPACED_OPERATIONS } from '../../gate/operations.js';
import type { Api } from '../../http/endpoint.js';
import { parseParams } from '../../http/schema/validate.js';
import { usageRecord, type StoredBytes } from '../admin/usage.js';
import { ACCOUNT_ENDPOINTS as EP } from './endpoints.js';
import { periodQuery } from '../admin/endpoints.js';

export function registerAccountRoutes(api: Api, gate: Gate, storage: StoredBytes): void {
  /** The caller's current record (the gate authenticated it a moment ago). */
  const callerOf = (tenantId: string) => {
    const t = gate.registry.get(tenantId);
    if (!t) throw new Error(`tenant ${tenantId} authenticated but not in the registry`);
    return t;
  };

  api.mount(EP.own_usage, async (ctx) => {
    const period = parseParams(periodQuery, ctx.query).period ?? periodOf();
    ctx.body = await usageRecord(gate, storage, callerOf(gateOf(ctx).tenant.tenantId), period);
  });

  api.mount(EP.own_namespaces, async (ctx) => {
    const { tenant } = gateOf(ctx);
    ctx.body = {
      tenant_id: tenant.tenantId,
      namespaces: tenant.namespaces.map((namespace) => ({ namespace, operations: NAMESPACED_OPERATIONS })),
    };
  });
}
