// The gate's tables: the tenant registry and the monthly usage ledger.
import type { Migration } from '../db.js';

export const GATE_MIGRATIONS: Migration[] = [
  {
    component: 'gate',
    version: 1,
    sql: `
      CREATE TABLE gate_tenants (
        tenant_id TEXT PRIMARY KEY,
        plan TEXT NOT NULL CHECK (plan IN ('starter', 'builder', 'pro', 'enterprise')),
        namespaces TEXT NOT NULL DEFAULT '["default"]',  -- JSON array of namespace names
        email TEXT,
        active INTEGER NOT NULL DEFAULT 1,
        key_hash TEXT NOT NULL UNIQUE,                   -- lowercase hex SHA-256 of the API key
        rate_limit_requests INTEGER,                     -- NULL: SVC_GATE_DEFAULT_RATE_LIMIT_*
        rate_limit_window_s INTEGER,
        monthly_quota REAL,                              -- NULL: the plan's (enterprise: env) quota
        created_at REAL NOT NULL,                        -- unix seconds
        key_rotated_at REAL,
        deactivated_at REAL,
        purge_after REAL,
        purged_at REAL
      );
      -- CU per (tenant, UTC month, breakdown bucket), in thousandths of a CU so sums are exact.
      CREATE TABLE gate_usage (
        tenant_id TEXT NOT NULL,
        period TEXT NOT NULL,
        bucket TEXT NOT NULL,
        cu_milli INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, period, bucket)
      ) WITHOUT ROWID;
    `,
  },
  {
    component: 'gate',
    version: 2,
    // NULL: the plan's storage quota (enterprise: SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES).
    sql: 'ALTER TABLE gate_tenants ADD COLUMN storage_quota_bytes INTEGER;',
  },
  {
    component: 'gate',
    version: 3,
    // CU held for requests in progress on any node (UsageStore.hold); expires_at in unix ms.
    sql: `
      CREATE TABLE gate_quota_holds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant_id TEXT NOT NULL,
        period TEXT NOT NULL,
        milli INTEGER NOT NULL,
        expires_at REAL NOT NULL
      );
      CREATE INDEX gate_quota_holds_tenant ON gate_quota_holds (tenant_id, period);
    `,
  },
];
