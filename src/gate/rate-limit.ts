// An exact sliding-window rate limit (CONTRACT.md section 5), built from rate-limiter-flexible's
// fixed windows.
//
// The rule: a request at time t is admitted when fewer than L admitted requests fall in (t - W, t].
// Equivalently: when the L-th most recent admission is at least W old. So it is enough to remember
// the last L admissions, and to look only at the oldest of them.
//
// SlotWindow (the default): each tenant owns L "slots", rate-limiter-flexible keys `<tenant>#<i>`
// of one point each and a duration of W seconds. Admission number a (counted from 0) takes slot
// a mod L, which was last taken by admission a - L. Consuming the slot therefore succeeds exactly when
// admission a - L has left the window (its one-point fixed window expired); when it fails, the
// store's msBeforeNext is the exact time until it leaves: Retry-After. A rejected request does not
// advance the count, so it takes nothing from the window. Remaining and Reset come from the oldest
// live slot, tracked with a pointer that only moves forward (amortised O(1) store calls per request).
// The store is any one-point rate-limiter-flexible limiter: RateLimiterMemory here. Nodes that share
// limits use src/store/redis/rate-windows.ts instead (the same rule in a Lua script, a batch of requests per call).
//
// LogWindow: RateLimiterMemory keeps a record and a timer per key (about 450 bytes per admission in
// the window), fine for the plans (at most 1000 per tenant) but not for a custom enterprise limit of
// millions. Above SLOT_LIMIT_MAX requests per window the same rule runs on a compact ring of expiry
// times (8 bytes per admission, grown on demand). Both give identical answers; a tenant moves between
// them when its limit changes, keeping the admissions in its window.
//
// Calls for one tenant run one at a time (a promise chain), so consume-then-advance never interleaves.
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from './plans.js';

/** Limits above this many requests per window use the compact log instead of rate-limiter-flexible slots. */
export const SLOT_LIMIT_MAX = 65_536;

export interface RateDecision {
  admitted: boolean;
  limit: number;
  windowS: number;
  /** Requests still admissible right now (after this one, when admitted). */
  remaining: number;
  /** Unix ms when the oldest counted request leaves the window (when remaining next grows). */
  resetAtMs: number;
  /** Rejected only: ms until a request would be admitted (>= 1). */
  retryAfterMs: number;
}

/** Counts a tenant's requests against its limit: in process (SlidingWindowLimiter) or shared by nodes (store/redis). */
export interface RateLimiter {
  /**
   * Count a request of `key` against `limit`; a changed limit applies from this call on. Rejects with
   * RateLimiterUnavailable when the shared store that keeps the windows cannot be reached.
   */
  hit(key: string, limit: RateLimit): Promise<RateDecision>;
}

/** Retry-After (seconds) of the 503 answered while the shared rate-limit store cannot be reached. */
export const RATE_STORE_RETRY_AFTER_S = 1;

/** The shared store of rate windows cannot be reached: the request is neither counted nor admitted. */
export class RateLimiterUnavailable extends Error {
  constructor(cause: unknown) {
    super(`the rate-limit store cannot be reached (${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = 'RateLimiterUnavailable';
  }
}

interface TenantWindow {
  readonly limit: number;
  readonly windowS: number;
  decide(): Promise<RateDecision>;
  /** Unix ms at which each admission still in the window leaves it, oldest first. */
  liveExpiries(): Promise<number[]>;
  dispose(): Promise<void>;
}

/** rate-limiter-flexible slots (see the top of this file). */
class SlotWindow implements TenantWindow {
  /** Admissions so far; the next one takes slot `admitted % limit`. */
  private admitted = 0;
  /** Lowest admission number that may still be inside the window. */
  private oldest = 0;
  /** Unix ms when admission `oldestKnown` leaves the window. */
  private oldestExpiresAt = 0;
  /** The admission number oldestExpiresAt belongs to (-1: none). */
  private oldestKnown = -1;

  private constructor(
    private readonly store: RateLimiterAbstract,
    private readonly key: string,
    readonly limit: number,
    readonly windowS: number,
  ) {}

  static async create(store: RateLimiterAbstract, key: string, limit: RateLimit, expiries: number[]): Promise<SlotWindow> {
    const w = new SlotWindow(store, key, limit.requests, limit.window_s);
    const now = Date.now();
    for (const at of expiries) {
      if (at <= now) continue;
      await store.set(w.slot(w.admitted), 1, (at - now) / 1000);
      w.admitted += 1;
    }
    return w;
  }

  private slot(admission: number): string {
    return `${this.key}#${admission % this.limit}`;
  }

  async decide(): Promise<RateDecision> {
    let rejected: RateLimiterRes | null = null;
    try {
      await this.store.consume(this.slot(this.admitted), 1, { customDuration: this.windowS });
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res; // the store failed
      rejected = res;
    }
    const now = Date.now();
    if (!rejected) this.admitted += 1;
    if (this.oldestUnknown(now)) await this.advanceOldest();
    const counted = this.admitted - this.oldest;
    return {
      admitted: rejected === null,
      limit: this.limit,
      windowS: this.windowS,
      remaining: Math.max(0, this.limit - counted),
      resetAtMs: counted > 0 ? this.oldestExpiresAt : now,
      retryAfterMs: rejected ? Math.max(1, rejected.msBeforeNext) : 0,
    };
  }

  /**
   * Move `oldest` past admissions that the window can no longer hold; true when the expiry of the
   * oldest is not known, so advanceOldest must ask the store (a synchronous check: most requests
   * need no store call, and then no promise).
   */
  private oldestUnknown(now: number): boolean {
    if (this.oldest < this.admitted - this.limit) {
      this.oldest = this.admitted - this.limit;
      this.oldestKnown = -1;
    }
    // A slot's expiry never moves while it is live, so a known one saves the store call.
    return !(this.oldestKnown === this.oldest && now < this.oldestExpiresAt);
  }

  /** Move `oldest` past admissions whose slot expired; stops at the first live one. */
  private async advanceOldest(): Promise<void> {
    while (this.oldest < this.admitted) {
      const asked = Date.now(); // the store measures msBeforeNext from its own clock reading, now
      const res = await this.store.get(this.slot(this.oldest));
      if (res && res.msBeforeNext > 0) {
        this.oldestExpiresAt = asked + res.msBeforeNext;
        this.oldestKnown = this.oldest;
        return;
      }
      this.oldest += 1;
    }
  }

  async liveExpiries(): Promise<number[]> {
    const out: number[] = [];
    const now = Date.now();
    for (let a = Math.max(this.oldest, this.admitted - this.limit); a < this.admitted; a++) {
      const res = await this.store.get(this.slot(a));
      if (res && res.msBeforeNext > 0) out.push(now + res.msBeforeNext);
    }
    return out;
  }

  async dispose(): Promise<void> {
    for (let i = 0; i < this.limit && i < this.admitted; i++) await this.store.delete(`${this.key}#${i}`);
  }
}

/** A ring of expiry times (unix ms), oldest first; grows by doubling up to `limit`. */
class LogWindow implements TenantWindow {
  private ring: Float64Array;
  private head = 0;
  private count = 0;

  constructor(
    readonly limit: number,
    readonly windowS: number,
    expiries: number[],
  ) {
    this.ring = new Float64Array(Math.min(limit, Math.max(64, expiries.length)));
    const now = Date.now();
    for (const at of expiries) if (at > now) this.push(at);
  }

  private push(expiresAt: number): void {
    if (this.count === this.ring.length) {
      const bigger = new Float64Array(Math.min(this.limit, this.ring.length * 2));
      for (let i = 0; i < this.count; i++) bigger[i] = this.ring[(this.head + i) % this.ring.length]!;
      this.ring = bigger;
      this.head = 0;
    }
    this.ring[(this.head + this.count) % this.ring.length] = expiresAt;
    this.count += 1;
  }

  async decide(): Promise<RateDecision> {
    const now = Date.now();
    while (this.count > 0 && this.ring[this.head]! <= now) {
      this.head = (this.head + 1) % this.ring.length;
      this.count -= 1;
    }
    const admitted = this.count < this.limit;
    if (admitted) this.push(now + this.windowS * 1000);
    const oldest = this.ring[this.head]!;
    return {
      admitted,
      limit: this.limit,
      windowS: this.windowS,
      remaining: this.limit - this.count,
      resetAtMs: oldest,
      retryAfterMs: admitted ? 0 : Math.max(1, oldest - now),
    };
  }

  async liveExpiries(): Promise<number[]> {
    const now = Date.now();
    const out: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const at = this.ring[(this.head + i) % this.ring.length]!;
      if (at > now) out.push(at);
    }
    return out;
  }

  async dispose(): Promise<void> {
    this.ring = new Float64Array(0);
    this.count = 0;
  }
}

interface Entry {
  window: TenantWindow | null;
  tail: Promise<unknown>;
}

export class SlidingWindowLimiter implements RateLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly store: RateLimiterAbstract;
  private readonly slotLimitMax: number;

  /**
   * `store`: a one-point rate-limiter-flexible limiter for the slots (default: RateLimiterMemory);
   * `slotLimitMax`: the largest limit kept in slots (larger ones use the compact log).
   */
  constructor(opts: { store?: RateLimiterAbstract; slotLimitMax?: number } = {}) {
    this.store = opts.store ?? new RateLimiterMemory({ keyPrefix: 'ttstore-rl', points: 1, duration: 60 });
    if (this.store.points !== 1) throw new Error('the slot store must grant one point per key');
    this.slotLimitMax = opts.slotLimitMax ?? SLOT_LIMIT_MAX;
  }

  /** Count a request of `key` against `limit`; a changed limit applies from this call on. */
  hit(key: string, limit: RateLimit): Promise<RateDecision> {
    let e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { window: null, tail: Promise.resolve() }));
    const entry = e;
    const run = entry.tail.then(async () => {
      const w = entry.window;
      if (!w || w.limit !== limit.requests || w.windowS !== limit.window_s) entry.window = await this.rebuild(key, w, limit);
      return entry.window!.decide();
    });
    entry.tail = run.catch(() => undefined);
    return run;
  }

  /** Which representation a key uses now (for tests and metrics). */
  kindOf(key: string): 'slots' | 'log' | null {
    const w = this.entries.get(key)?.window;
    return w ? (w instanceof SlotWindow ? 'slots' : 'log') : null;
  }

  /**
   * A new limit or window: keep the admissions still inside the window (their expiry moved by the
   * change of window length), the newest `requests` of them.
   */
  private async rebuild(key: string, old: TenantWindow | null, limit: RateLimit): Promise<TenantWindow> {
    let expiries: number[] = [];
    if (old) {
      const shiftMs = (limit.window_s - old.windowS) * 1000;
      expiries = (await old.liveExpiries()).map((at) => at + shiftMs).slice(-limit.requests);
      await old.dispose();
    }
    return limit.requests <= this.slotLimitMax
      ? SlotWindow.create(this.store, key, limit, expiries)
      : new LogWindow(limit.requests, limit.window_s, expiries);
  }
}
