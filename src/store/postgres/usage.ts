// Metered usage over PostgreSQL (gate_usage): one statement adds a flush's amounts, each an atomic
// increment of its (tenant, period, bucket) row, so flushes of several nodes add up exactly.
import type { ChargedAmount, HeldQuota, QuotaHold, UsageAmount, UsageStore } from '../usage.js';
import { prepared, type PgDatabase } from './db.js';

// What the amounts of a write settle leaves the holds as the usage arrives, never one without the
// other (a hold emptied goes at the tenant's next hold). One row per hold id.
const ADD_USAGE = prepared(
  `WITH settled AS (UPDATE gate_quota_holds h SET milli = h.milli - s.milli
                      FROM unnest($5::bigint[], $6::bigint[]) AS s (id, milli) WHERE h.id = s.id)
   INSERT INTO gate_usage (tenant_id, period, bucket, cu_milli)
   SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
   ON CONFLICT (tenant_id, period, bucket) DO UPDATE SET cu_milli = gate_usage.cu_milli + excluded.cu_milli`,
);
const UNHOLD = prepared('DELETE FROM gate_quota_holds WHERE id = $1');
const SHRINK = prepared('UPDATE gate_quota_holds SET milli = milli - $2 WHERE id = $1');

export class PgUsageStore implements UsageStore {
  readonly shared = true;

  constructor(private readonly db: PgDatabase) {}

  async ofPeriod(period: string): Promise<UsageAmount[]> {
    const rows = await this.db.all<{ tenant_id: string; bucket: string; cu_milli: number }>(
      'SELECT tenant_id, bucket, cu_milli FROM gate_usage WHERE period = $1',
      [period],
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, period, bucket: r.bucket, milli: r.cu_milli }));
  }

  async ofTenant(tenantId: string, period: string): Promise<UsageAmount[]> {
    const rows = await this.db.all<{ bucket: string; cu_milli: number }>(
      'SELECT bucket, cu_milli FROM gate_usage WHERE tenant_id = $1 AND period = $2',
      [tenantId, period],
    );
    return rows.map((r) => ({ tenantId, period, bucket: r.bucket, milli: r.cu_milli }));
  }

  async totals(period: string): Promise<Map<string, number>> {
    const rows = await this.db.all<{ tenant_id: string; milli: number }>(
      'SELECT tenant_id, SUM(cu_milli) AS milli FROM gate_usage WHERE period = $1 GROUP BY tenant_id',
      [period],
    );
    return new Map(rows.map((r) => [r.tenant_id, r.milli]));
  }

  /**
   * take() runs once a connection is free, never before add() has returned: amounts charged while
   * the write waits join it (the meter relies on that), and amounts are taken exactly once.
   */
  add(take: () => Iterable<ChargedAmount>): Promise<void> {
    return this.db.connected(async (c) => {
      // Summed per row first: one INSERT ... ON CONFLICT may not change a row twice.
      const sums = new Map<string, UsageAmount>();
      const settles = new Map<string, number>();
      for (const a of take()) {
        const k = JSON.stringify([a.tenantId, a.period, a.bucket]);
        const s = sums.get(k);
        if (s) s.milli += a.milli;
        else sums.set(k, { tenantId: a.tenantId, period: a.period, bucket: a.bucket, milli: a.milli });
        for (const st of a.settles ?? []) settles.set(st.id, (settles.get(st.id) ?? 0) + st.milli);
      }
      if (sums.size === 0) return;
      // In key order, so two nodes' flushes lock shared rows in the same order and never deadlock.
      const rows = [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
      await c.query(ADD_USAGE, [
        rows.map((r) => r.tenantId),
        rows.map((r) => r.period),
        rows.map((r) => r.bucket),
        rows.map((r) => r.milli),
        [...settles.keys()],
        [...settles.values()],
      ]);
    });
  }

  async hold(h: QuotaHold, now: number): Promise<HeldQuota | null> {
    // Holds of one tenant and period are decided one at a time, across every node (gate migration 3).
    const row = await this.db.get<{ hold_id: string | number; held_milli: string | number }>(
      'SELECT hold_id, held_milli FROM ttstore_quota_hold($1, $2, $3, $4, $5, $6, $7, $8)',
      [
        JSON.stringify(['quota', h.tenantId, h.period]),
        h.tenantId,
        h.period,
        h.milli,
        h.blockMilli ?? h.milli,
        h.expiresAt,
        h.quotaMilli,
        now,
      ],
    );
    return row ? { id: String(row.hold_id), milli: Number(row.held_milli) } : null;
  }

  async unhold(id: string): Promise<void> {
    await this.db.run(UNHOLD, [id]);
  }

  async shrink(id: string, milli: number): Promise<void> {
    await this.db.run(SHRINK, [id, milli]);
  }
}
