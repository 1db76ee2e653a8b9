// The storage boundary of metered usage, CU per (tenant, UTC month, breakdown bucket) in thousandths
// so sums are exact. The gate's meter depends on this interface; src/store/sqlite/usage.ts implements it.
/** A (tenant, month, bucket) amount of CU in thousandths. */
export interface UsageAmount {
  tenantId: string;
  period: string;
  bucket: string;
  milli: number;
}

/** Thousandths of a CU a charge moves out of a hold (by its id) into usage, in the same write. */
export interface Settle {
  id: string;
  milli: number;
}

/** An amount being charged, with what it settles of the quota holds in the same write. */
export interface ChargedAmount extends UsageAmount {
  settles?: readonly Settle[];
}

/**
 * CU held in the store for a request in progress, so that the quota check of every node sees it.
 * A hold lapses at `expiresAt` (unix ms): a node that dies mid-request frees its holds by then.
 */
export interface QuotaHold {
  tenantId: string;
  period: string;
  milli: number;
  /**
   * A block to hold instead of `milli` (larger), granted only while the usage and holds leave at
   * least another block free; near the quota the hold falls back to `milli`. Unset: `milli`.
   */
  blockMilli?: number;
  quotaMilli: number;
  expiresAt: number;
}

/** A hold the store granted: its id and the thousandths held (a block or the request's own). */
export interface HeldQuota {
  id: string;
  milli: number;
}

/** The storage boundary of metered usage: CU per (tenant, UTC month, breakdown bucket). */
export interface UsageStore {
  /** Every tenant's amounts per bucket in `period`. */
  ofPeriod(period: string): Promise<UsageAmount[]>;
  /** One tenant's amounts per bucket in `period`. */
  ofTenant(tenantId: string, period: string): Promise<UsageAmount[]>;
  /** Each tenant's total in `period`. */
  totals(period: string): Promise<Map<string, number>>;
  /**
   * Add amounts durably. `take` runs when the write starts, so amounts that arrive while it waits
   * join it; `size` (how many amounts, about) sizes the write.
   */
  add(take: () => Iterable<ChargedAmount>, size: number): Promise<void>;
  /**
   * Whether several nodes write this store: then the meter holds CU here (hold) as well as in memory,
   * since only the store sees every node's usage.
   */
  readonly shared: boolean;
  /**
   * Atomically: when the period's usage plus the unexpired holds of the tenant plus two blocks stay
   * within `h.quotaMilli`, hold a block; else when they plus `h.milli` do, hold `h.milli`; else null
   * (nothing held). `now` (unix ms) decides which holds have expired.
   */
  hold(h: QuotaHold, now: number): Promise<HeldQuota | null>;
  /** Drop a hold (its request was not charged); a hold already gone is no error. */
  unhold(id: string): Promise<void>;
  /** Give back `milli` of a hold (a block's unused part, or a draw from it that was not charged). */
  shrink(id: string, milli: number): Promise<void>;
}
