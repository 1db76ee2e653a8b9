// Metered usage over SQLite (gate_usage): one UPSERT per (tenant, period, bucket) per write, riding
// the writer's group commit however many requests it covers.
import type { ChargedAmount, HeldQuota, QuotaHold, UsageAmount, UsageStore } from '../usage.js';
import type { Database } from './db.js';

export class SqliteUsageStore implements UsageStore {
  // One process owns the file: its meter's memory sees all usage, so no request waits for a hold here.
  readonly shared = false;

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

  add(take: () => Iterable<ChargedAmount>, size: number): Promise<void> {
    return this.db.write(
      async (tx) => {
        for (const a of take()) {
          await tx.run(
            `INSERT INTO gate_usage (tenant_id, period, bucket, cu_milli) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant_id, period, bucket) DO UPDATE SET cu_milli = cu_milli + excluded.cu_milli`,
            [a.tenantId, a.period, a.bucket, a.milli],
          );
          for (const st of a.settles ?? [])
            await tx.run('UPDATE gate_quota_holds SET milli = milli - ? WHERE id = ?', [st.milli, Number(st.id)]);
        }
        // Its own writer lane: a flush waits for the transaction in progress, never behind a tenant's queue.
      },
      { lane: 'meter', cost: Math.max(1, size) },
    );
  }

  hold(h: QuotaHold, now: number): Promise<HeldQuota | null> {
    // The single writer decides holds one at a time, across every connection to the file (the rule
    // of PostgreSQL's ttstore_quota_hold).
    return this.db.write(
      async (tx) => {
        await tx.run('DELETE FROM gate_quota_holds WHERE tenant_id = ? AND period = ? AND (expires_at <= ? OR milli <= 0)', [
          h.tenantId,
          h.period,
          now,
        ]);
        const taken = await tx.get<{ milli: number }>(
          `SELECT (SELECT COALESCE(SUM(cu_milli), 0) FROM gate_usage WHERE tenant_id = ?1 AND period = ?2)
                + (SELECT COALESCE(SUM(milli), 0) FROM gate_quota_holds WHERE tenant_id = ?1 AND period = ?2) AS milli`,
          [h.tenantId, h.period],
        );
        const used = taken?.milli ?? 0;
        const block = h.blockMilli ?? h.milli;
        const milli = block > h.milli && used + 2 * block <= h.quotaMilli ? block : used + h.milli <= h.quotaMilli ? h.milli : 0;
        if (milli === 0) return null;
        const r = await tx.run('INSERT INTO gate_quota_holds (tenant_id, period, milli, expires_at) VALUES (?, ?, ?, ?)', [
          h.tenantId,
          h.period,
          milli,
          h.expiresAt,
        ]);
        return { id: String(r.lastID), milli };
      },
      { lane: 'meter' },
    );
  }

  async unhold(id: string): Promise<void> {
    await this.db.write((tx) => tx.run('DELETE FROM gate_quota_holds WHERE id = ?', [Number(id)]), { lane: 'meter' });
  }

  async shrink(id: string, milli: number): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE gate_quota_holds SET milli = milli - ? WHERE id = ?', [milli, Number(id)]), {
      lane: 'meter',
    });
  }
}
