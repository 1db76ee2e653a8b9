// The storage boundary of metered usage, CU per (tenant, UTC month, breakdown bucket) in thousandths
// so sums are exact. The gate's meter depends on this interface; src/store/sqlite/usage.ts implements it.
/** A (tenant, month, bucket) amount of CU in thousandths. */
export interface UsageAmount {
  tenantId: string;
  period: string;
  bucket: string;
  milli: number;
}

/** An amount being charged, with the quota holds (QuotaHold ids) it settles in the same write. */
export interface ChargedAmount extends UsageAmount {
  settles?: readonly string[];
}

/**
 * CU held in the store for a request in progress, so that the quota check of every node sees it.
 * A hold lapses at `expiresAt` (unix ms): a node that dies mid-request frees its holds by then.
 */
export interface QuotaHold {
  tenantId: string;
  period: string;
  milli: number;
  quotaMilli: number;
  expiresAt: number;
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
   * Atomically: when the period's usage plus the unexpired holds of the tenant plus `h.milli` stay
   * within `h.quotaMilli`, record the hold and return its id; else null (nothing held). `now` (unix
   * ms) decides which holds have expired.
   */
  hold(h: QuotaHold, now: number): Promise<string | null>;
  /** Drop a hold (its request was not charged); a hold already gone is no error. */
  unhold(id: string): Promise<void>;
}
