// Tenants over SQLite (gate_tenants). Every change is one write transaction that reads the row back,
// so the registry installs exactly what committed.
import { settableColumns, type NewTenantRow, type TenantChange, type TenantPatch, type TenantRow, type TenantStore } from '../tenants.js';
import type { Database, SqlValue, Tx } from './db.js';

const SELECT = `SELECT tenant_id, plan, namespaces, email, active, key_hash, rate_limit_requests,
  rate_limit_window_s, monthly_quota, storage_quota_bytes, created_at, key_rotated_at, deactivated_at, purge_after
  FROM gate_tenants`;

function isUniqueViolation(err: unknown): boolean {
  return /SQLITE_CONSTRAINT/.test(String((err as Error)?.message ?? err));
}

const readRow = (tx: Tx, tenantId: string): Promise<TenantRow | undefined> =>
  tx.get<TenantRow>(`${SELECT} WHERE tenant_id = ?`, [tenantId]);

export class SqliteTenantStore implements TenantStore {
  constructor(private readonly db: Database) {}

  all(): Promise<TenantRow[]> {
    // Read through the writer queue, so the read is ordered with this process's own changes: a
    // rotation that commits just before is in the rows; one just after installs into the new maps.
    return this.db.write((tx) => tx.all<TenantRow>(`${SELECT} ORDER BY tenant_id`));
  }

  async insert(row: NewTenantRow): Promise<TenantRow | null> {
    try {
      return await this.db.write(async (tx) => {
        await tx.run(
          `INSERT INTO gate_tenants (tenant_id, plan, namespaces, email, active, key_hash, rate_limit_requests,
             rate_limit_window_s, monthly_quota, storage_quota_bytes, created_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)`,
          [
            row.tenant_id,
            row.plan,
            row.namespaces,
            row.email,
            row.key_hash,
            row.rate_limit_requests,
            row.rate_limit_window_s,
            row.monthly_quota,
            row.storage_quota_bytes,
            row.created_at,
          ],
        );
        return (await readRow(tx, row.tenant_id))!;
      });
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  update(tenantId: string, patch: (current: TenantRow) => TenantPatch | null): Promise<TenantChange> {
    return this.db.write(async (tx): Promise<TenantChange> => {
      const current = await readRow(tx, tenantId);
      if (!current) return { missing: true };
      if (current.active === 0) return { inactive: true };
      const set = settableColumns(patch(current));
      if (set.length > 0) {
        await tx.run(`UPDATE gate_tenants SET ${set.map(([col]) => `${col} = ?`).join(', ')} WHERE tenant_id = ?`, [
          ...set.map(([, v]) => v as SqlValue),
          tenantId,
        ]);
      }
      return { row: (await readRow(tx, tenantId))! };
    });
  }

  deactivate(tenantId: string, at: number, purgeAfter: number): Promise<TenantRow | undefined> {
    return this.db.write(async (tx) => {
      const current = await readRow(tx, tenantId);
      if (!current) return undefined;
      if (current.active !== 0) {
        await tx.run('UPDATE gate_tenants SET active = 0, deactivated_at = ?, purge_after = ? WHERE tenant_id = ?', [
          at,
          purgeAfter,
          tenantId,
        ]);
      }
      return readRow(tx, tenantId);
    });
  }

  async duePurges(at: number): Promise<string[]> {
    const rows = await this.db.all<{ tenant_id: string }>(
      'SELECT tenant_id FROM gate_tenants WHERE active = 0 AND purge_after <= ? AND purged_at IS NULL ORDER BY tenant_id',
      [at],
    );
    return rows.map((r) => r.tenant_id);
  }

  async markPurged(tenantId: string, at: number): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE gate_tenants SET purged_at = ? WHERE tenant_id = ?', [at, tenantId]));
  }
}
