// The storage boundary of tenants and their keys: one row per tenant, the key kept as its SHA-256
// only. The gate's registry depends on this interface; src/store/sqlite/tenants.ts implements it.

/** A tenant as stored (the registry turns it into a TenantRecord). */
export interface TenantRow {
  tenant_id: string;
  plan: string;
  /** JSON array of namespace names. */
  namespaces: string;
  email: string | null;
  active: number;
  /** Lowercase hex SHA-256 of the API key. */
  key_hash: string;
  rate_limit_requests: number | null;
  rate_limit_window_s: number | null;
  monthly_quota: number | null;
  storage_quota_bytes: number | null;
  created_at: number;
  key_rotated_at: number | null;
  deactivated_at: number | null;
  purge_after: number | null;
}

/** The columns a change of an active tenant may set. */
export const TENANT_PATCH_COLUMNS = [
  'plan',
  'namespaces',
  'key_hash',
  'key_rotated_at',
  'rate_limit_requests',
  'rate_limit_window_s',
  'monthly_quota',
  'storage_quota_bytes',
] as const satisfies ReadonlyArray<keyof TenantRow>;

export type TenantPatch = Partial<Pick<TenantRow, (typeof TENANT_PATCH_COLUMNS)[number]>>;

const PATCHABLE: ReadonlySet<string> = new Set(TENANT_PATCH_COLUMNS);

/** The (column, value) pairs of a patch that name patchable columns: a store builds its SQL from these names only. */
export function settableColumns(patch: TenantPatch | null): Array<[string, TenantPatch[keyof TenantPatch]]> {
  return Object.entries(patch ?? {}).filter(([col]) => PATCHABLE.has(col));
}

export type NewTenantRow = Omit<TenantRow, 'active' | 'key_rotated_at' | 'deactivated_at' | 'purge_after'>;

/** What a change found: the row after it, or why there was nothing to change. */
export type TenantChange = { row: TenantRow } | { missing: true } | { inactive: true };

export interface TenantStore {
  /** Every tenant, ordered by id, read in order with this process's own changes. */
  all(): Promise<TenantRow[]>;
  /** Insert an active tenant; null when its id (or key) is taken. */
  insert(row: NewTenantRow): Promise<TenantRow | null>;
  /**
   * Change an active tenant in one transaction: `patch` sees the current row and returns the
   * columns to set (nothing to set: null).
   */
  update(tenantId: string, patch: (current: TenantRow) => TenantPatch | null): Promise<TenantChange>;
  /** Deactivate at `at`, data kept until `purgeAfter`; a deactivated tenant stays as it is. Undefined when missing. */
  deactivate(tenantId: string, at: number, purgeAfter: number): Promise<TenantRow | undefined>;
  /** Deactivated tenants whose retention has run out at `at` and whose data was not purged yet. */
  duePurges(at: number): Promise<string[]>;
  markPurged(tenantId: string, at: number): Promise<void>;
}
