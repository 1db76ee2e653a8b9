// The bytes the server holds for requests in flight (request bodies, dense results, their base64 and
// JSON forms), under one limit (SVC_GATE_MAX_INFLIGHT_BYTES, CONTRACT.md section 8). Every request
// holds its bytes in a Hold that it grows before it allocates and that is released, all at once, when
// its response is done or its client is gone. One tenant holds at most half of the limit, always: a
// lone tenant that could fill it would keep the next tenant's request waiting for as long as its own
// slowest download takes, and section 8 wants the other tenants unaffected. A growth that does not
// fit waits briefly for bytes to come back, then fails with 503 overloaded.
import { ProblemError } from '../http/errors.js';
import { abandoned } from './engine-admission.js';

/** How long a growth that does not fit waits for other requests to give bytes back. */
export const BUDGET_WAIT_MS = 1500;
/** Retry-After of a 503 overloaded, seconds. */
export const OVERLOADED_RETRY_S = 1;

export interface ByteBudgetOptions {
  /** Bytes all requests together may hold. */
  limit: number;
  /** Bounded wait of a growth that does not fit, milliseconds. Default BUDGET_WAIT_MS. */
  waitMs?: number;
}

export interface ByteBudgetStats {
  limit: number;
  /** Bytes held now. */
  held: number;
  /** The most one tenant may hold. */
  share: number;
  /** Growths waiting for bytes to come back. */
  waiting: number;
  /** Growths refused with 503 overloaded since start. */
  refused: number;
}

interface Growth {
  owner: string;
  bytes: number;
  grant(): void;
}

export class ByteBudget {
  readonly limit: number;
  /** The most one tenant may hold. */
  readonly share: number;
  private readonly waitMs: number;
  private held = 0;
  private readonly heldBy = new Map<string, number>();
  private readonly waiters: Growth[] = [];
  private refused = 0;

  constructor(opts: ByteBudgetOptions) {
    this.limit = opts.limit;
    this.share = Math.floor(opts.limit / 2);
    this.waitMs = opts.waitMs ?? BUDGET_WAIT_MS;
  }

  /** An empty hold of `owner` (a tenant); grow it before allocating, release it when done. */
  open(owner: string): Hold {
    return new Hold(this, owner);
  }

  stats(): ByteBudgetStats {
    return { limit: this.limit, held: this.held, share: this.share, waiting: this.waiters.length, refused: this.refused };
  }

  /** Take `bytes` for `owner` now if they fit; false (nothing taken) otherwise. */
  tryTake(owner: string, bytes: number): boolean {
    if (!this.fits(owner, bytes)) return false;
    this.add(owner, bytes);
    return true;
  }

  /**
   * Take `bytes` for `owner`, waiting up to the bounded wait for them to come back; rejects with 503
   * overloaded when they do not, at once when they could never fit (with `kept`, bytes the caller
   * already holds and keeps while it waits), or when `signal` aborts first.
   */
  take(owner: string, bytes: number, signal?: AbortSignal, kept = 0): Promise<void> {
    if (this.tryTake(owner, bytes)) return Promise.resolve();
    if (kept + bytes > this.share) {
      return Promise.reject(this.overloaded(owner, bytes, `a tenant holds at most ${this.share}`));
    }
    if (signal?.aborted) return Promise.reject(this.overloaded(owner, bytes, 'its client went away'));
    return new Promise<void>((resolve, reject) => {
      const leave = (why: string) => {
        const i = this.waiters.indexOf(growth);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(this.overloaded(owner, bytes, why));
      };
      const onAbort = () => leave('its client went away');
      const timer = setTimeout(() => leave(`none came back within ${this.waitMs} ms`), this.waitMs);
      const growth: Growth = {
        owner,
        bytes,
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.waiters.push(growth);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Give back `bytes` that `owner` took; waiting growths that now fit are granted. */
  give(owner: string, bytes: number): void {
    if (bytes <= 0) return;
    this.held -= bytes;
    const n = this.heldBy.get(owner)! - bytes;
    if (n === 0) this.heldBy.delete(owner);
    else this.heldBy.set(owner, n);
    this.grantWaiting();
  }

  private fits(owner: string, bytes: number): boolean {
    return this.held + bytes <= this.limit && (this.heldBy.get(owner) ?? 0) + bytes <= this.share;
  }

  private add(owner: string, bytes: number): void {
    this.held += bytes;
    this.heldBy.set(owner, (this.heldBy.get(owner) ?? 0) + bytes);
  }

  /** Oldest first, every waiting growth that fits now (a large one does not stop a small one behind it). */
  private grantWaiting(): void {
    for (let i = 0; i < this.waiters.length;) {
      const g = this.waiters[i]!;
      if (this.fits(g.owner, g.bytes)) {
        this.waiters.splice(i, 1);
        this.add(g.owner, g.bytes);
        g.grant();
      } else {
        i++;
      }
    }
  }

  private overloaded(owner: string, bytes: number, why: string): ProblemError {
    this.refused++;
    return new ProblemError(
      503,
      'overloaded',
      `the server holds too much for requests in flight to take ${bytes} more bytes for tenant ${owner} (${why}); retry in ${OVERLOADED_RETRY_S} s`,
      { retry_after_s: OVERLOADED_RETRY_S },
      { 'Retry-After': String(OVERLOADED_RETRY_S) },
    );
  }
}

/** What one request holds of a ByteBudget: grown before allocating, released once at the end. */
export class Hold {
  private held = 0;
  private released = false;

  constructor(
    private readonly budget: ByteBudget,
    readonly owner: string,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** Take `bytes` more now if they fit; false (nothing taken) otherwise. */
  tryGrow(bytes: number): boolean {
    if (this.released || !this.budget.tryTake(this.owner, bytes)) return false;
    this.held += bytes;
    return true;
  }

  /** Take `bytes` more (ByteBudget.take: a bounded wait, then 503 overloaded). */
  async grow(bytes: number, signal?: AbortSignal): Promise<void> {
    if (bytes <= 0) return;
    if (this.released) throw abandoned(); // released with its response: the client is gone
    await this.budget.take(this.owner, bytes, signal, this.held);
    if (this.released)
      this.budget.give(this.owner, bytes); // released while it waited: nothing is kept
    else this.held += bytes;
  }

  /** Give back `bytes` of what is held (e.g. a workspace freed before the response ends). */
  shrink(bytes: number): void {
    const n = Math.min(bytes, this.held);
    this.held -= n;
    this.budget.give(this.owner, n);
  }

  /** Give back everything; later growths fail. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const n = this.held;
    this.held = 0;
    this.budget.give(this.owner, n);
  }
}
