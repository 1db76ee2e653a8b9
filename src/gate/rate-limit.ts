// An exact sliding-window rate limit (CONTRACT.md section 5) built from rate-limiter-flexible's
// fixed windows.
//
// The rule: a request at time t is admitted when fewer than L admitted requests fall in (t - W, t].
// Equivalently: when the L-th most recent admission is at least W old. So it is enough to remember
// the last L admissions, and to look only at the oldest of them.
//
// Each tenant owns L "slots", rate-limiter-flexible keys `<tenant>#<i>` of one point each and a
// duration of W seconds. Admission number a (counted from 0) takes slot a mod L; that slot was last
// taken by admission a - L. Consuming the slot therefore succeeds exactly when admission a - L has
// left the window (its one-point fixed window expired), and when it fails the store's msBeforeNext is
// the exact time until it leaves: Retry-After. A rejected request does not advance the count, so it
// takes nothing from the window. Remaining and Reset come from the oldest live slot, tracked with a
// pointer that only moves forward (amortised O(1) store calls per request).
//
// Consume-then-advance must not interleave for one tenant, so each tenant's calls run one at a time
// (a promise chain). Memory: at most min(L, admissions in the last W) slots per tenant.
// The store is any rate-limiter-flexible limiter (RateLimiterMemory here). A shared store such as
// RateLimiterRedis keeps the slots, but the admission counter and the per-tenant ordering live in
// this process: several processes would need them in the store too (a Lua script).
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from './plans.js';

export interface RateDecision {
  admitted: boolean;
  limit: number;
  windowS: number;
  /** Requests still admissible right now (after this one, when admitted). */
  remaining: number;
  /** Unix ms when the oldest counted request leaves the window (when remaining next grows). */
  resetAtMs: number;
  /** Rejected only: ms until a request would be admitted. */
  retryAfterMs: number;
}

interface TenantWindow {
  limit: number;
  windowS: number;
  /** Admissions so far; the next one takes slot `admitted % limit`. */
  admitted: number;
  /** Lowest admission number that may still be inside the window. */
  oldest: number;
  /** Unix ms when `oldest` leaves the window (valid when admitted > oldest). */
  oldestExpiresAt: number;
  tail: Promise<unknown>;
}

export class SlidingWindowLimiter {
  private readonly windows = new Map<string, TenantWindow>();
  private readonly store: RateLimiterAbstract;

  /** `store`: a one-point limiter; default an in-process RateLimiterMemory. */
  constructor(store?: RateLimiterAbstract) {
    this.store = store ?? new RateLimiterMemory({ keyPrefix: 'ttstore-rl', points: 1, duration: 60 });
    if (this.store.points !== 1) throw new Error('the slot store must grant one point per key');
  }

  /** Count a request of `key` against `limit`; a changed limit applies from this call on. */
  hit(key: string, limit: RateLimit): Promise<RateDecision> {
    let w = this.windows.get(key);
    if (!w) {
      w = { limit: limit.requests, windowS: limit.window_s, admitted: 0, oldest: 0, oldestExpiresAt: 0, tail: Promise.resolve() };
      this.windows.set(key, w);
    }
    const win = w;
    const run = win.tail.then(() => this.decide(key, win, limit));
    win.tail = run.catch(() => undefined);
    return run;
  }

  /** Forget a key's window (its slots expire on their own). */
  forget(key: string): void {
    this.windows.delete(key);
  }

  private slot(key: string, admission: number, limit: number): string {
    return `${key}#${admission % limit}`;
  }

  private async decide(key: string, w: TenantWindow, limit: RateLimit): Promise<RateDecision> {
    if (w.limit !== limit.requests || w.windowS !== limit.window_s) await this.resize(key, w, limit);
    const L = w.limit;
    let admitted = true;
    let rejectedRes: RateLimiterRes | null = null;
    try {
      await this.store.consume(this.slot(key, w.admitted, L), 1, { customDuration: w.windowS });
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res; // the store failed
      admitted = false;
      rejectedRes = res;
    }
    const now = Date.now();
    if (admitted) w.admitted += 1;
    await this.advanceOldest(key, w, now);
    const counted = w.admitted - w.oldest;
    return {
      admitted,
      limit: L,
      windowS: w.windowS,
      remaining: Math.max(0, L - counted),
      resetAtMs: counted > 0 ? w.oldestExpiresAt : now,
      retryAfterMs: admitted ? 0 : Math.max(1, rejectedRes!.msBeforeNext),
    };
  }

  /** Move `oldest` past admissions whose slot expired; stops at the first live one. */
  private async advanceOldest(key: string, w: TenantWindow, now: number): Promise<void> {
    if (w.oldest < w.admitted - w.limit) w.oldest = w.admitted - w.limit;
    while (w.oldest < w.admitted) {
      const res = await this.store.get(this.slot(key, w.oldest, w.limit));
      if (res && res.msBeforeNext > 0) {
        w.oldestExpiresAt = now + res.msBeforeNext;
        return;
      }
      w.oldest += 1;
    }
  }

  /**
   * A new limit or window: keep the admissions still inside the window (their times shifted by the
   * change of window length), the newest `requests` of them, in fresh slots.
   */
  private async resize(key: string, w: TenantWindow, limit: RateLimit): Promise<void> {
    const live: number[] = []; // ms until each live admission (oldest first) leaves the old window
    for (let a = Math.max(w.oldest, w.admitted - w.limit); a < w.admitted; a++) {
      const slot = this.slot(key, a, w.limit);
      const res = await this.store.get(slot);
      if (res && res.msBeforeNext > 0) live.push(res.msBeforeNext);
    }
    for (let i = 0; i < w.limit && i < w.admitted; i++) await this.store.delete(`${key}#${i}`);
    const shiftMs = (limit.window_s - w.windowS) * 1000;
    const keep = live.map((ms) => ms + shiftMs).filter((ms) => ms > 0).slice(-limit.requests);
    for (let i = 0; i < keep.length; i++) await this.store.set(`${key}#${i}`, 1, keep[i]! / 1000);
    w.limit = limit.requests;
    w.windowS = limit.window_s;
    w.admitted = keep.length;
    w.oldest = 0;
    w.oldestExpiresAt = 0;
  }
}
