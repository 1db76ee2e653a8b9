// Tenants over PostgreSQL (gate_tenants). A change locks the tenant's row (SELECT ... FOR UPDATE), so
// two nodes changing one tenant apply their patches one after the other, each to the row the other left.
import { settableColumns, type NewTenantRow, type TenantChange, type TenantPatch, type TenantRow, type TenantStore } from '../tenants.js';
import { isUniqueViolation, type PgDatabase, type PgTx } from './db.js';

const COLUMNS = `tenant_id, plan, namespaces, email, active, key_hash, rate_limit_requests,
  rate_limit_window_s, monthly_quota, storage_quota_bytes, created_at, key_rotated_at, deactivated_at, purge_after`;
const SELECT = `SELECT ${COLUMNS} FROM gate_tenants`;

const lockRow = async (c: PgTx, tenantId: string): Promise<TenantRow | undefined> =>
  (await c.query<TenantRow>(`${SELECT} WHERE tenant_id = $1 FOR UPDATE`, [tenantId])).rows[0];

const readRow = async (c: PgTx, tenantId: string): Promise<TenantRow> =>
  (await c.query<TenantRow>(`${SELECT} WHERE tenant_id = $1`, [tenantId])).rows[0]!;

export class PgTenantStore implements TenantStore {
  constructor(private readonly db: PgDatabase) {}

  all(): Promise<TenantRow[]> {
    return this.db.all<TenantRow>(`${SELECT} ORDER BY tenant_id`);
  }

  async insert(row: NewTenantRow): Promise<TenantRow | null> {
    try {
      return (await this.db.get<TenantRow>(
        `INSERT INTO gate_tenants (tenant_id, plan, namespaces, email, active, key_hash, rate_limit_requests,
           rate_limit_window_s, monthly_quota, storage_quota_bytes, created_at) VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9, $10)
         RETURNING ${COLUMNS}`,
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
      ))!;
    } catch (err) {
      if (isUniqueViolation(err)) return null;
      throw err;
    }
  }

  update(tenantId: string, patch: (current: TenantRow) => TenantPatch | null): Promise<TenantChange> {
    return this.db.tx(async (c): Promise<TenantChange> => {
      const current = await lockRow(c, tenantId);
      if (!current) return { missing: true };
      if (current.active === 0) return { inactive: true };
      const set = settableColumns(patch(current));
      if (set.length > 0) {
        await c.query(`UPDATE gate_tenants SET ${set.map(([col], i) => `${col} = $${i + 2}`).join(', ')} WHERE tenant_id = $1`, [
          tenantId,
          ...set.map(([, v]) => v),
        ]);
      }
      return { row: await readRow(c, tenantId) };
    });
  }

  deactivate(tenantId: string, at: number, purgeAfter: number): Promise<TenantRow | undefined> {
    return this.db.tx(async (c) => {
      const current = await lockRow(c, tenantId);
      if (!current) return undefined;
      if (current.active !== 0) {
        await c.query('UPDATE gate_tenants SET active = 0, deactivated_at = $2, purge_after = $3 WHERE tenant_id = $1', [
          tenantId,
          at,
          purgeAfter,
        ]);
      }
      return readRow(c, tenantId);
    });
  }

  async duePurges(at: number): Promise<string[]> {
    const rows = await this.db.all<{ tenant_id: string }>(
      'SELECT tenant_id FROM gate_tenants WHERE active = 0 AND purge_after <= $1 AND purged_at IS NULL ORDER BY tenant_id',
      [at],
    );
    return rows.map((r) => r.tenant_id);
  }

  async markPurged(tenantId: string, at: number): Promise<void> {
    await this.db.run('UPDATE gate_tenants SET purged_at = $2 WHERE tenant_id = $1', [tenantId, at]);
  }
}
