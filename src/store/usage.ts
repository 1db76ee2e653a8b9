// The storage boundary of metered usage, CU per (tenant, UTC month, breakdown bucket) in thousandths
// so sums are exact. The gate's meter depends on this interface; src/store/sqlite/usage.ts implements it.
/** A (tenant, month, bucket) amount of CU in thousandths. */
export interface UsageAmount {
  tenantId: string;
  period: string;
  bucket: string;
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
  add(take: () => Iterable<UsageAmount>, size: number): Promise<void>;
}
