// A tenant's usage record (CONTRACT.md section 6 and 8): CU in a period by operation against the
// monthly quota, bytes stored now against the storage quota. The one computation behind the
// operator's usage endpoints and a tenant's own (GET /v1/usage).
import type { Gate } from '../../gate/index.js';
import { effectiveQuota, effectiveStorageQuota } from '../../gate/plans.js';
import type { TenantRecord } from '../../gate/registry.js';

/** What the usage records read of storage: stored bytes now, of every node (the entries service's ledger). */
export interface StoredBytes {
  reportedBytes(tenantId: string): Promise<number>;
  reportedBytesAll(): Promise<Map<string, number>>;
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

export function utilization(cus: number, quota: number): number {
  return quota > 0 ? round6(cus / quota) : 0;
}

/** Stored bytes (`stored`) and the storage quota of a tenant, as every usage record shows them. */
export function storageUsage(gate: Pick<Gate, 'config'>, stored: number, t: TenantRecord) {
  return { stored_bytes: stored, storage_quota_bytes: effectiveStorageQuota(t, gate.config) };
}

/** One tenant's usage record in `period`. */
export async function usageRecord(gate: Pick<Gate, 'config' | 'meter'>, storage: StoredBytes, t: TenantRecord, period: string) {
  const quota = effectiveQuota(t, gate.config);
  const u = await gate.meter.usageOf(t.tenantId, period);
  return {
    tenant_id: t.tenantId,
    period,
    cus_used: u.cusUsed,
    monthly_quota: quota,
    utilization: utilization(u.cusUsed, quota),
    breakdown: u.breakdown,
    ...storageUsage(gate, await storage.reportedBytes(t.tenantId), t),
  };
}
