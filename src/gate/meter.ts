// CU metering and the monthly quota (CONTRACT.md section 5).
//
// Reserve before the work, settle after: reserve() checks used + reserved + cost <= quota and holds
// the cost in memory (so concurrent requests can never overshoot); charge() on a 2xx moves it to
// `used` and persists it; release() drops it. Amounts are integers in thousandths of a CU, so 0.1 +
// 0.2 is exactly 0.3.
//
// Several nodes (a shared usage store): memory sees only this node's charges, so a reservation that
// passes it is also held in the store (UsageStore.hold), which checks the usage and holds of every
// node at once; the charge moves what it settles out of the hold in the same write that adds the
// usage. Far from the quota a node holds a block of it (QUOTA_BLOCK_*) and draws its requests from
// the block in memory, so most requests wait for no hold; it gives the unused rest back after
// QUOTA_BLOCK_DRAW_MS. The store grants a block only while another block stays free, so near the
// quota every request holds its own amount: the total never passes the quota, and what other nodes'
// blocks keep unused can refuse a request for at most QUOTA_BLOCK_DRAW_MS.
//
// Durability: charge() resolves once the CU are committed to the usage store, and the gate awaits it
// before the response leaves, so a restart (or crash) loses no charged CU. Charges that arrive while
// a write is queued join it: one amount per (tenant, period, bucket) per write, however many
// requests it covers.
import { ProblemError } from '../http/errors.js';
import type { Logger } from '../runtime/log.js';
import { QUOTA_HOLD_TTL_MS } from '../store/stores.js';
import type { Settle, UsageStore } from '../store/usage.js';
import { BREAKDOWN_KEYS, OPERATIONS, type BreakdownKey, type ChargedOperation } from './operations.js';
import type { TenantRecord } from './registry.js';

export const MILLI = 1000;

/** A block holds this many requests' cost ... */
const QUOTA_BLOCK_REQUESTS = 100;
/** ... but at most this share of the quota, so that blocks matter only far from it. */
const QUOTA_BLOCK_SHARE = 1 / 1000;
/** How long a node draws from a block before it gives the unused rest back. */
const QUOTA_BLOCK_DRAW_MS = 1000;
/**
 * On a shared store, after a usage write that took at least USAGE_WRITE_BUSY charges (the node is busy),
 * the next starts no sooner than USAGE_WRITE_PACE_MS after it, so that more charges join it (as
 * PostgreSQL's commit_delay does for its commits). A lightly loaded node writes each charge at once.
 */
export const USAGE_WRITE_PACE_MS = 8;
export const USAGE_WRITE_BUSY = 4;

let cachedPeriod = '';
let cachedUntil = 0; // unix ms at which cachedPeriod ends

/** The UTC calendar month of `at` (default now), `YYYY-MM`. Cheap: recomputed once a month. */
export function periodOf(at?: Date): string {
  if (at) return at.toISOString().slice(0, 7);
  const now = Date.now();
  if (now >= cachedUntil || now < cachedUntil - 32 * 86_400_000) {
    const d = new Date(now);
    cachedPeriod = d.toISOString().slice(0, 7);
    cachedUntil = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  return cachedPeriod;
}

export const PERIOD_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface Reservation {
  readonly tenantId: string;
  readonly period: string;
  readonly bucket: BreakdownKey;
  readonly milli: number;
  /** What was reserved for (the metrics label of the charge). */
  readonly op: ChargedOperation;
  /** The id of its hold in a shared usage store; null on a store one node owns. */
  readonly hold: string | null;
  /** The block it was drawn from (its hold is the block's); undefined when it holds its own. */
  readonly block?: QuotaBlock;
}

/** A block of a tenant's quota this node holds in the shared store, and what of it is not drawn. */
interface QuotaBlock {
  readonly id: string;
  readonly tenantId: string;
  readonly period: string;
  /** Thousandths not yet drawn. */
  left: number;
  /** False once its draw time is over (its rest given back): a release then gives back to the store. */
  drawing: boolean;
}

/** A charge not yet written: its CU and the holds the write settles. */
interface PendingCharge {
  milli: number;
  settles: Settle[];
}

export interface UsageFigures {
  cusUsed: number;
  breakdown: Record<BreakdownKey, number>;
}

interface TenantUsage {
  period: string;
  usedMilli: number;
  reservedMilli: number;
  breakdownMilli: Record<BreakdownKey, number>;
}

const emptyBreakdown = (): Record<BreakdownKey, number> =>
  Object.fromEntries(BREAKDOWN_KEYS.map((k) => [k, 0])) as Record<BreakdownKey, number>;

const toCu = (milli: number): number => milli / MILLI;

export class Meter {
  /** Current-period usage of every tenant seen, charged or reserved. */
  private readonly usage = new Map<string, TenantUsage>();
  /** Charges not yet handed to a database write: "tenant\0period\0bucket" -> milli. */
  private pending = new Map<string, PendingCharge>();
  /** The write that takes new charges (queued, not yet started); null when none is. */
  private flushing: Promise<void> | null = null;
  /** The last write handed to the store (started or queued): the next starts after it. */
  private tail: Promise<void> | null = null;
  /** When the last write started (unix ms), and how many charges it took. */
  private lastWrite = 0;
  private lastWriteCharges = 0;
  /** Charges in `pending`. */
  private pendingCharges = 0;
  /** The block of each tenant this node draws from (shared store only). */
  private readonly blocks = new Map<string, QuotaBlock>();
  /** Per tenant, the hold in flight that asked for a block (settles once it is open, or refused). */
  private readonly opening = new Map<string, Promise<void>>();

  constructor(
    private readonly store: UsageStore,
    private readonly log: Logger,
  ) {}

  /** Load the current period's usage of every tenant not yet in memory (start-up and reload). */
  async load(): Promise<void> {
    const period = periodOf();
    const rows = await this.store.ofPeriod(period);
    const loaded = new Map<string, TenantUsage>();
    for (const row of rows) {
      if (this.usage.get(row.tenantId)?.period === period) continue; // memory is ahead of the disk
      let u = loaded.get(row.tenantId);
      if (!u) loaded.set(row.tenantId, (u = { period, usedMilli: 0, reservedMilli: 0, breakdownMilli: emptyBreakdown() }));
      if ((BREAKDOWN_KEYS as readonly string[]).includes(row.bucket)) u.breakdownMilli[row.bucket as BreakdownKey] += row.milli;
      u.usedMilli += row.milli;
    }
    for (const [id, u] of loaded) this.usage.set(id, u);
  }

  /**
   * Hold `op`'s CU for `tenant` in the current period; 402 quota_exceeded when used + reserved + cost
   * would pass `quota` (CU), in this node's memory or, on a shared store, across every node.
   */
  async reserve(tenant: TenantRecord, op: ChargedOperation, quota: number): Promise<Reservation> {
    const { cu, bucket } = OPERATIONS[op];
    const milli = Math.round(cu * MILLI);
    const u = this.current(tenant.tenantId);
    const quotaMilli = Math.round(quota * MILLI);
    const exceeded = (usedMilli: number) =>
      new ProblemError(
        402,
        'quota_exceeded',
        `this ${op} (${cu} CU) would take tenant ${tenant.tenantId} past its monthly quota of ${quota} CU for ${u.period}`,
        { period: u.period, monthly_quota: quota, cus_used: toCu(usedMilli), cost: cu },
      );
    if (u.usedMilli + u.reservedMilli + milli > quotaMilli) throw exceeded(u.usedMilli);
    u.reservedMilli += milli;
    const local: Reservation = { tenantId: tenant.tenantId, period: u.period, bucket, milli, op, hold: null };
    if (!this.store.shared) return local;
    const drawn = this.draw(tenant.tenantId, u.period, milli);
    if (drawn) return { ...local, hold: drawn.id, block: drawn };
    // A block another request of the tenant is asking for: drawn from once granted, rather than each
    // request of a burst asking for (and then giving back) a block of its own.
    const opening = this.opening.get(tenant.tenantId);
    if (opening) {
      await opening;
      const later = this.draw(tenant.tenantId, u.period, milli);
      if (later) return { ...local, hold: later.id, block: later };
    }
    const blockMilli = Math.max(milli, Math.min(milli * QUOTA_BLOCK_REQUESTS, Math.floor(quotaMilli * QUOTA_BLOCK_SHARE)));
    let opened: (() => void) | undefined;
    if (blockMilli > milli && !this.opening.has(tenant.tenantId)) {
      this.opening.set(tenant.tenantId, new Promise<void>((resolve) => (opened = resolve)));
    }
    try {
      let held: { id: string; milli: number } | null;
      try {
        const now = Date.now();
        held = await this.store.hold(
          { tenantId: tenant.tenantId, period: u.period, milli, blockMilli, quotaMilli, expiresAt: now + QUOTA_HOLD_TTL_MS },
          now,
        );
      } catch (err) {
        this.release(local);
        throw err;
      }
      if (held === null) {
        this.release(local);
        let used = 0;
        for (const row of await this.store.ofTenant(tenant.tenantId, u.period)) used += row.milli;
        throw exceeded(used);
      }
      if (held.milli > milli) {
        const block = this.openBlock(tenant.tenantId, u.period, held.id, held.milli - milli);
        return { ...local, hold: held.id, block };
      }
      return { ...local, hold: held.id };
    } finally {
      if (opened) {
        this.opening.delete(tenant.tenantId);
        opened();
      }
    }
  }

  /** `milli` from the tenant's block in memory, when it has that much left; else undefined. */
  private draw(tenantId: string, period: string, milli: number): QuotaBlock | undefined {
    const b = this.blocks.get(tenantId);
    if (!b || b.period !== period || b.left < milli) return undefined;
    b.left -= milli;
    return b;
  }

  /** A block just granted (`left` not yet drawn): drawn from until QUOTA_BLOCK_DRAW_MS, then its rest goes back. */
  private openBlock(tenantId: string, period: string, id: string, left: number): QuotaBlock {
    const block: QuotaBlock = { id, tenantId, period, left, drawing: true };
    const before = this.blocks.get(tenantId);
    if (before) this.closeBlock(before);
    this.blocks.set(tenantId, block);
    setTimeout(() => this.closeBlock(block), QUOTA_BLOCK_DRAW_MS).unref();
    return block;
  }

  private closeBlock(b: QuotaBlock): void {
    if (!b.drawing) return;
    b.drawing = false;
    if (this.blocks.get(b.tenantId) === b) this.blocks.delete(b.tenantId);
    const rest = b.left;
    b.left = 0;
    if (rest > 0) this.giveBack(b.id, rest);
  }

  private giveBack(id: string, milli: number): void {
    // Should this fail, the rest stays held until the hold expires (QUOTA_HOLD_TTL_MS).
    this.store.shrink(id, milli).catch((err: unknown) => this.log.error({ err }, 'could not give back part of a quota hold'));
  }

  release(r: Reservation): void {
    const u = this.usage.get(r.tenantId);
    if (u && u.period === r.period) u.reservedMilli = Math.max(0, u.reservedMilli - r.milli);
    if (r.hold === null) return;
    if (r.block?.drawing) r.block.left += r.milli;
    else if (r.block) this.giveBack(r.hold, r.milli);
    // Should this fail, the hold lapses at its expiry.
    else this.store.unhold(r.hold).catch((err: unknown) => this.log.error({ err }, 'could not drop a quota hold'));
  }

  /** Turn reservations into usage; resolves once the CU are durable. */
  charge(rs: readonly Reservation[]): Promise<void> {
    this.pendingCharges += rs.length;
    for (const r of rs) {
      const u = this.usage.get(r.tenantId);
      if (u && u.period === r.period) {
        u.reservedMilli = Math.max(0, u.reservedMilli - r.milli);
        u.usedMilli += r.milli;
        u.breakdownMilli[r.bucket] += r.milli;
      }
      const k = `${r.tenantId}\0${r.period}\0${r.bucket}`;
      let p = this.pending.get(k);
      if (!p) this.pending.set(k, (p = { milli: 0, settles: [] }));
      p.milli += r.milli;
      if (r.hold !== null) p.settles.push({ id: r.hold, milli: r.milli });
    }
    return this.flush();
  }

  /**
   * Usage of one tenant in `period` (default current): memory for the current period when this node
   * owns the store, else the store.
   */
  async usageOf(tenantId: string, period = periodOf()): Promise<UsageFigures> {
    if (period === periodOf() && !this.store.shared) {
      const u = this.usage.get(tenantId);
      return u && u.period === period ? figures(u.usedMilli, u.breakdownMilli) : figures(0, emptyBreakdown());
    }
    const rows = await this.store.ofTenant(tenantId, period);
    const b = emptyBreakdown();
    let total = 0;
    for (const row of rows) {
      if ((BREAKDOWN_KEYS as readonly string[]).includes(row.bucket)) b[row.bucket as BreakdownKey] += row.milli;
      total += row.milli;
    }
    return figures(total, b);
  }

  /** CU used by every tenant with usage in `period`. */
  async usageAll(period = periodOf()): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (period === periodOf() && !this.store.shared) {
      for (const [id, u] of this.usage) if (u.period === period) out.set(id, toCu(u.usedMilli));
      return out;
    }
    for (const [tenantId, milli] of await this.store.totals(period)) out.set(tenantId, toCu(milli));
    return out;
  }

  private current(tenantId: string): TenantUsage {
    const period = periodOf();
    let u = this.usage.get(tenantId);
    if (!u || u.period !== period) {
      // A new month starts from zero (reservations of the old month settle against the old one).
      u = { period, usedMilli: 0, reservedMilli: 0, breakdownMilli: emptyBreakdown() };
      this.usage.set(tenantId, u);
    }
    return u;
  }

  /**
   * Persist the pending charges. One write at a time: the next starts when the one in progress has
   * committed (and, on a busy node of a shared store, its pace allows), and takes every charge made
   * meanwhile, so a busy node writes a few large batches rather than one small write per request on
   * every pool connection. A write queued (not yet started) takes the new ones too. The promise
   * settles when the write holding them commits.
   */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    let batch: Map<string, PendingCharge> | null = null;
    const write = () =>
      this.store.add(() => {
        // From here on, new charges go to the next write.
        this.flushing = null;
        batch = this.pending;
        this.pending = new Map();
        this.lastWriteCharges = this.pendingCharges;
        this.pendingCharges = 0;
        return [...batch].map(([k, { milli, settles }]) => {
          const [tenantId, period, bucket] = k.split('\0') as [string, string, string];
          return { tenantId, period, bucket, milli, settles };
        });
      }, this.pending.size);
    const start = () => {
      const busy = this.store.shared && this.lastWriteCharges >= USAGE_WRITE_BUSY;
      const wait = busy ? this.lastWrite + USAGE_WRITE_PACE_MS - Date.now() : 0;
      const go = () => {
        this.lastWrite = Date.now();
        return write();
      };
      return wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)).then(go) : go();
    };
    const job = this.tail ? this.tail.then(start, start) : start();
    this.flushing = job;
    this.tail = job;
    job.then(
      () => {
        if (this.tail === job) this.tail = null;
      },
      (err: unknown) => {
        if (this.tail === job) this.tail = null;
        if (this.flushing === job) this.flushing = null;
        if (batch) this.requeue(batch);
        this.log.error({ err }, 'could not persist metered CU; retrying in 1 s');
        setTimeout(() => {
          if (this.pending.size > 0) this.flush().catch(() => undefined);
        }, 1000).unref();
      },
    );
    return job;
  }

  private requeue(batch: Map<string, PendingCharge>): void {
    for (const [k, b] of batch) {
      const p = this.pending.get(k);
      if (p) {
        p.milli += b.milli;
        p.settles.push(...b.settles);
      } else this.pending.set(k, b);
    }
  }
}

function figures(usedMilli: number, breakdownMilli: Record<BreakdownKey, number>): UsageFigures {
  const breakdown = emptyBreakdown();
  for (const k of BREAKDOWN_KEYS) breakdown[k] = toCu(breakdownMilli[k]);
  return { cusUsed: toCu(usedMilli), breakdown };
}
