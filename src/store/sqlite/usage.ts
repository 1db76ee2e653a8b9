// Metered usage over SQLite (gate_usage): one UPSERT per (tenant, period, bucket) per write, riding
// the writer's group commit however many requests it covers.
import type { UsageAmount, UsageStore } from '../usage.js';
import type { Database } from './db.js';

export class SqliteUsageStore implements UsageStore {
  constructor(private readonly db: Database) {}

  async ofPeriod(period: string): Promise<UsageAmount[]> {
    const rows = await this.db.all<{ tenant_id: string; bucket: string; cu_milli: number }>(
      'SELECT tenant_id, bucket, cu_milli FROM gate_usage WHERE period = ?',
      [period],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, period, bucket: r.bucket, milli: r.cu_milli }));
  }

  async ofTenant(tenantId: string, period: string): Promise<UsageAmount[]> {
    const rows = await this.db.all<{ bucket: string; cu_milli: number }>(
      'SELECT bucket, cu_milli FROM gate_usage WHERE tenant_id = ? AND period = ?',
      [tenantId, period],
    );
    return rows.map((r) => ({ tenantId, period, bucket: r.bucket, milli: r.cu_milli }));
  }

  async totals(period: string): Promise<Map<string, number>> {
    const rows = await this.db.all<{ tenant_id: string; milli: number }>(
      'SELECT tenant_id, SUM(cu_milli) AS milli FROM gate_usage WHERE period = ? GROUP BY tenant_id',
      [period],
    );
    return new Map(rows.map((r) => [r.tenant_id, r.milli]));
  }

  add(take: () => Iterable<UsageAmount>, size: number): Promise<void> {
    return this.db.write(
      async (tx) => {
        for (const a of take()) {
          await tx.run(
            `INSERT INTO gate_usage (tenant_id, period, bucket, cu_milli) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant_id, period, bucket) DO UPDATE SET cu_milli = cu_milli + excluded.cu_milli`,
            [a.tenantId, a.period, a.bucket, a.milli],
          );
        }
        // Its own writer lane: a flush waits for the transaction in progress, never behind a tenant's queue.
      },
      { lane: 'meter', cost: Math.max(1, size) },
    );
  }
}
