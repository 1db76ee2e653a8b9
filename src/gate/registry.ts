// The tenant registry: rows in the TenantStore, served from an in-memory cache keyed by the SHA-256
// of each active tenant's key. Every change commits to the store first and then replaces the cached
// record, so a rotated or deactivated key fails for every request that starts after the admin
// response. reload() re-reads every tenant (rows written by another process included).
import { ProblemError, notFound } from '../http/errors.js';
import type { Logger } from '../runtime/log.js';
import type { TenantChange, TenantPatch, TenantRow, TenantStore } from '../store/tenants.js';
import { PLANS, type Plan } from './context.js';
import { API_KEY_RE, generateApiKey, sha256Hex } from './keys.js';
import { limitsForPlan, type CustomLimits, type RateLimit } from './plans.js';

/** One tenant as the gate knows it. Immutable: a change replaces the object. */
export interface TenantRecord {
  readonly tenantId: string;
  readonly plan: Plan;
  readonly namespaces: readonly string[];
  readonly namespaceSet: ReadonlySet<string>;
  readonly email: string | null;
  readonly active: boolean;
  readonly keyHash: Buffer;
  /** Stored limits; null: see plans.ts (effectiveRateLimit, effectiveQuota). */
  readonly rateLimit: RateLimit | null;
  readonly monthlyQuota: number | null;
  readonly storageQuotaBytes: number | null;
  readonly createdAt: number;
  readonly keyRotatedAt: number | null;
  readonly deactivatedAt: number | null;
  readonly purgeAfter: number | null;
}

function toRecord(row: TenantRow): TenantRecord {
  if (!(PLANS as readonly string[]).includes(row.plan)) throw new Error(`unknown plan "${row.plan}"`);
  const namespaces = JSON.parse(row.namespaces) as unknown;
  if (!Array.isArray(namespaces) || !namespaces.every((n) => typeof n === 'string')) {
    throw new Error('namespaces is not a JSON array of strings');
  }
  if (!/^[0-9a-f]{64}$/i.test(row.key_hash)) throw new Error('key_hash is not a hex SHA-256 digest');
  const hasLimit =
    row.rate_limit_requests !== null && row.rate_limit_window_s !== null && row.rate_limit_requests >= 1 && row.rate_limit_window_s >= 1;
  return Object.freeze({
    tenantId: row.tenant_id,
    plan: row.plan as Plan,
    namespaces: Object.freeze([...namespaces] as string[]),
    namespaceSet: new Set(namespaces as string[]),
    email: row.email,
    active: row.active !== 0,
    keyHash: Buffer.from(row.key_hash, 'hex'),
    rateLimit: hasLimit ? { requests: Math.floor(row.rate_limit_requests!), window_s: Math.floor(row.rate_limit_window_s!) } : null,
    monthlyQuota: row.monthly_quota,
    storageQuotaBytes: row.storage_quota_bytes,
    createdAt: row.created_at,
    keyRotatedAt: row.key_rotated_at,
    deactivatedAt: row.deactivated_at,
    purgeAfter: row.purge_after,
  });
}

export interface CreateTenantInput extends CustomLimits {
  tenantId: string;
  plan: Plan;
  namespaces: string[];
  email: string | null;
}

const nowS = (): number => Date.now() / 1000;

export class TenantRegistry {
  private byId = new Map<string, TenantRecord>();
  /** Active tenants only, by hex SHA-256 of the key. */
  private byHash = new Map<string, TenantRecord>();
  private readonly listeners: Array<(tenantId: string) => void> = [];

  constructor(
    private readonly store: TenantStore,
    private readonly log: Logger,
  ) {}

  /** (Re)read every tenant from the store and swap the cache in one step; returns the count. */
  async reload(): Promise<number> {
    // Ordered with this process's own changes: a rotation that commits just before is in the rows;
    // one just after installs into the new maps.
    const rows = await this.store.all();
    const byId = new Map<string, TenantRecord>();
    const byHash = new Map<string, TenantRecord>();
    for (const row of rows) {
      let rec: TenantRecord;
      try {
        rec = toRecord(row);
      } catch (err) {
        this.log.error({ tenant_id: row.tenant_id, reason: (err as Error).message }, 'skipping an unreadable tenant row');
        continue;
      }
      byId.set(rec.tenantId, rec);
      if (rec.active) byHash.set(row.key_hash.toLowerCase(), rec);
    }
    this.byId = byId;
    this.byHash = byHash;
    return byId.size;
  }

  /**
   * The active tenant holding this API key, or undefined. Cost: one SHA-256 and a map lookup (a hit
   * means the digests are equal; the map is keyed by them, so there is nothing left to compare).
   */
  authenticate(apiKey: string): TenantRecord | undefined {
    if (!API_KEY_RE.test(apiKey)) return undefined;
    const rec = this.byHash.get(sha256Hex(apiKey));
    return rec && rec.active ? rec : undefined;
  }

  get(tenantId: string): TenantRecord | undefined {
    return this.byId.get(tenantId);
  }

  /** Every tenant, ordered by tenant_id. */
  list(): TenantRecord[] {
    return [...this.byId.values()].sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : 0));
  }

  get size(): number {
    return this.byId.size;
  }

  /** Create an active tenant and its key; 409 tenant_exists when the id is taken (even if deactivated). */
  async create(input: CreateTenantInput): Promise<{ record: TenantRecord; apiKey: string }> {
    const apiKey = generateApiKey();
    const limits = limitsForPlan(input.plan, input);
    const row = await this.store.insert({
      tenant_id: input.tenantId,
      plan: input.plan,
      namespaces: JSON.stringify(input.namespaces),
      email: input.email,
      key_hash: sha256Hex(apiKey),
      rate_limit_requests: limits.rateLimit?.requests ?? null,
      rate_limit_window_s: limits.rateLimit?.window_s ?? null,
      monthly_quota: limits.monthlyQuota,
      storage_quota_bytes: limits.storageQuotaBytes,
      created_at: nowS(),
    });
    if (!row) throw new ProblemError(409, 'tenant_exists', `tenant ${input.tenantId} already exists`, { tenant_id: input.tenantId });
    return { record: this.install(row), apiKey };
  }

  /** Issue a new key; the old one stops working before this resolves. */
  async rotateKey(tenantId: string): Promise<{ record: TenantRecord; apiKey: string }> {
    const apiKey = generateApiKey();
    const row = await this.mutateActive(tenantId, () => ({ key_hash: sha256Hex(apiKey), key_rotated_at: nowS() }));
    return { record: this.install(row), apiKey };
  }

  /** Add a namespace to the ACL (no-op when present). */
  async addNamespace(tenantId: string, namespace: string): Promise<TenantRecord> {
    const row = await this.mutateActive(tenantId, (current) => {
      const list = JSON.parse(current.namespaces) as string[];
      if (list.includes(namespace)) return null;
      list.push(namespace);
      return { namespaces: JSON.stringify(list) };
    });
    return this.install(row);
  }

  /** Change the plan; its limits apply to the next request (custom values: enterprise only). */
  async updateTier(tenantId: string, plan: Plan, custom: CustomLimits): Promise<TenantRecord> {
    const limits = limitsForPlan(plan, custom);
    const row = await this.mutateActive(tenantId, () => ({
      plan,
      rate_limit_requests: limits.rateLimit?.requests ?? null,
      rate_limit_window_s: limits.rateLimit?.window_s ?? null,
      monthly_quota: limits.monthlyQuota,
      storage_quota_bytes: limits.storageQuotaBytes,
    }));
    return this.install(row);
  }

  /** Soft-delete: the key fails at once; data is kept until purge_after. Idempotent. */
  async deactivate(tenantId: string, retentionDays: number): Promise<TenantRecord> {
    const at = nowS();
    const row = await this.store.deactivate(tenantId, at, at + retentionDays * 86_400);
    if (!row) throw notFound(`no tenant ${tenantId}`);
    return this.install(row);
  }

  /** Deactivated tenants whose retention has run out and whose data was not purged yet. */
  duePurges(at = nowS()): Promise<string[]> {
    return this.store.duePurges(at);
  }

  markPurged(tenantId: string): Promise<void> {
    return this.store.markPurged(tenantId, nowS());
  }

  /** Change an active tenant; 404 when it is missing or deactivated. */
  private async mutateActive(tenantId: string, patch: (current: TenantRow) => TenantPatch | null): Promise<TenantRow> {
    const change: TenantChange = await this.store.update(tenantId, patch);
    if ('missing' in change) throw notFound(`no tenant ${tenantId}`);
    if ('inactive' in change) throw notFound(`tenant ${tenantId} is deactivated`);
    return change.row;
  }

  /** Call `listener` after each change this process commits (other nodes reload on it). */
  onChange(listener: (tenantId: string) => void): void {
    this.listeners.push(listener);
  }

  /** Put a committed row into the cache (called after the commit, never before). */
  private install(row: TenantRow): TenantRecord {
    const rec = toRecord(row);
    const previous = this.byId.get(rec.tenantId);
    if (previous) this.byHash.delete(previous.keyHash.toString('hex'));
    this.byId.set(rec.tenantId, rec);
    if (rec.active) this.byHash.set(rec.keyHash.toString('hex'), rec);
    for (const l of this.listeners) l(rec.tenantId);
    return rec;
  }
}
