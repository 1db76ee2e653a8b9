// The storage quota (CONTRACT.md section 8): the bytes a tenant stores for live and hidden-but-unpurged
// versions (core bytes, or data bytes for an uncompressed entry; simulation outputs included), summed
// once at start and kept in memory, with reservations so that concurrent writes can never together
// pass the quota. A write reserves its exact stored bytes once its representation is known and before
// its blob is written; the commit turns the reservation into stored bytes, a failure releases it, and
// compaction and tenant purges give bytes back.
//
// Several nodes (a shared store): memory sees only this node's writes, so a reservation that passes
// it is also held in the store (EntryStore.holdStorage), which sums every node's stored and held
// bytes at once. The hold is dropped after the commit (both counted for a moment: never too little).
import { ProblemError } from '../http/errors.js';
import type { EntryRow, StorageHold } from '../store/entries.js';
import { QUOTA_HOLD_TTL_MS } from '../store/stores.js';

/** The bytes an entry stores: its cores when compressed, else its data (the stores sum the same rule). */
export function storedBytesOf(row: Pick<EntryRow, 'blob_kind' | 'stored_core_bytes' | 'original_bytes'>): number {
  return row.blob_kind === 'cores' ? row.stored_core_bytes : row.original_bytes;
}

/** Bytes held for a write between its reservation and its commit or failure. */
export interface StorageReservation {
  readonly tenantId: string;
  readonly bytes: number;
  /** Set once committed or released, so a second settle is a no-op. */
  settled: boolean;
  /** The id of its hold in a shared store; null where one node owns the store. */
  hold: string | null;
}

/** The holds and sums of a shared store (the EntryStore methods of the same names). */
export interface StorageHolds {
  holdStorage(h: StorageHold, now: number): Promise<string | null>;
  unholdStorage(id: string): Promise<void>;
  storedBytesOfTenant(tenantId: string): Promise<number>;
  storedBytesByTenant(): Promise<Array<{ tenantId: string; bytes: number }>>;
}

/** A tenant's quota in bytes; null: unlimited. */
export type StorageQuotaOf = (tenantId: string) => number | null;

export class StorageLedger {
  private readonly stored = new Map<string, number>();
  private readonly reserved = new Map<string, number>();

  /** `holds`: given when several nodes share the store; `onError` hears of a hold that could not be dropped. */
  constructor(
    private readonly quotaOf: StorageQuotaOf = () => null,
    private readonly holds: StorageHolds | null = null,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Every tenant's stored bytes as the store summed them (start-up, before any write). */
  load(rows: Array<{ tenantId: string; bytes: number }>): void {
    this.stored.clear();
    for (const r of rows) this.stored.set(r.tenantId, r.bytes);
  }

  /** Committed bytes of a tenant (reservations not counted). */
  storedBytes(tenantId: string): number {
    return this.stored.get(tenantId) ?? 0;
  }

  /**
   * Committed bytes of a tenant as reported to people (usage records): on a shared store, what every
   * node committed (this node's ledger counts only its own writes), else the ledger's figure.
   */
  async reportedBytes(tenantId: string): Promise<number> {
    return this.holds ? this.holds.storedBytesOfTenant(tenantId) : this.storedBytes(tenantId);
  }

  /** reportedBytes of every tenant with stored bytes. */
  async reportedBytesAll(): Promise<Map<string, number>> {
    if (!this.holds) return new Map(this.stored);
    return new Map((await this.holds.storedBytesByTenant()).map((r) => [r.tenantId, Number(r.bytes)]));
  }

  quota(tenantId: string): number | null {
    return this.quotaOf(tenantId);
  }

  /**
   * 402 storage_quota_exceeded unless `bytes` more fit now (reaching the quota exactly is allowed).
   * A cheap refusal before expensive work; only reserve() holds the bytes.
   */
  check(tenantId: string, bytes: number): void {
    const quota = this.quotaOf(tenantId);
    if (quota === null) return;
    const stored = this.storedBytes(tenantId);
    const held = stored + (this.reserved.get(tenantId) ?? 0);
    if (held + bytes > quota) throw this.exceeded(tenantId, bytes, quota, `${held - stored} held by writes in progress`);
  }

  /** Hold `bytes` for a write of `tenantId`; 402 as check() says, or when the shared store refuses the hold. */
  async reserve(tenantId: string, bytes: number): Promise<StorageReservation> {
    this.check(tenantId, bytes);
    this.reserved.set(tenantId, (this.reserved.get(tenantId) ?? 0) + bytes);
    const local: StorageReservation = { tenantId, bytes, settled: false, hold: null };
    const quota = this.quotaOf(tenantId);
    if (this.holds === null || quota === null) return local;
    try {
      const now = Date.now();
      local.hold = await this.holds.holdStorage({ tenantId, bytes, quotaBytes: quota, expiresAt: now + QUOTA_HOLD_TTL_MS }, now);
    } catch (err) {
      this.release(local);
      throw err;
    }
    if (local.hold === null) {
      this.release(local);
      throw this.exceeded(tenantId, bytes, quota, 'more stored or held by writes on other nodes');
    }
    return local;
  }

  /** The write committed: its bytes are stored. */
  commit(r: StorageReservation): void {
    if (!this.unhold(r)) return;
    this.stored.set(r.tenantId, this.storedBytes(r.tenantId) + r.bytes);
  }

  private exceeded(tenantId: string, bytes: number, quota: number, held: string): ProblemError {
    const stored = this.storedBytes(tenantId);
    return new ProblemError(
      402,
      'storage_quota_exceeded',
      `storing ${bytes} more bytes would take tenant ${tenantId} past its storage quota of ${quota} bytes ` + `(${stored} stored, ${held})`,
      { storage_quota_bytes: quota, stored_bytes: stored, requested_bytes: bytes },
    );
  }

  /** The write failed or was discarded: its bytes are free again. */
  release(r: StorageReservation): void {
    this.unhold(r);
  }

  /** Committed bytes removed (compaction, tenant purge, a staged write rolled back at start). */
  freed(tenantId: string, bytes: number): void {
    const left = this.storedBytes(tenantId) - bytes;
    if (left > 0) this.stored.set(tenantId, left);
    else this.stored.delete(tenantId);
  }

  private unhold(r: StorageReservation): boolean {
    if (r.settled) return false;
    r.settled = true;
    // Should this fail, the hold lapses at its expiry.
    if (r.hold !== null) this.holds?.unholdStorage(r.hold).catch(this.onError);
    const left = (this.reserved.get(r.tenantId) ?? 0) - r.bytes;
    if (left > 0) this.reserved.set(r.tenantId, left);
    else this.reserved.delete(r.tenantId);
    return true;
  }
}
