// Admission of engine work (CONTRACT.md section 8): a few slots, given out in fair turns across
// tenants, and a cap on the engine requests one tenant has in flight. Each tenant waits in its own
// queue; when a slot frees, the waiting tenant with the fewest slots in use goes next, and among
// those the one whose last turn is oldest (round-robin), so another tenant's request waits at most
// for work already running, never behind the first tenant's queue. One tenant uses at most all slots
// but one, so the next tenant's work usually starts at once: with every compression using every core,
// a lone tenant loses nothing by it (two of its compressions at once share the same cores). The
// module knows tenants and slots, never tensors.
import { ProblemError } from '../errors.js';

/** Engine calls running at once: each compression already uses every core, so more only contend. */
export const ENGINE_SLOTS = 2;

/** Whose turn a piece of engine work takes, and when to give the turn up (the client has gone). */
export interface Turn {
  owner: string;
  signal?: AbortSignal;
}

/** Work the server does on its own behalf (a simulation's outputs): one more party in the turns. */
export const SERVER_TURN: Turn = Object.freeze({ owner: '\u0000server' });

/** One engine request counted against its tenant until leave() (idempotent). */
export interface InFlightTicket {
  leave(): void;
}

export interface EngineAdmissionOptions {
  /** Engine calls running at once. Default ENGINE_SLOTS. */
  slots?: number;
  /** Slots one owner may use at once. Default: all but one (one slot always free for the others). */
  ownerSlots?: number;
  /** Engine requests one tenant may have in flight (running or waiting); more: 429. Default: no limit. */
  tenantInflight?: number;
}

export interface EngineAdmissionStats {
  slots: number;
  running: number;
  /** Engine calls waiting for a slot. */
  waiting: number;
  /** Engine requests in flight, all tenants together. */
  inFlight: number;
  /** Requests refused with too_many_in_flight since start. */
  refused: number;
}

interface Waiter {
  start(): void;
}

export class EngineAdmission {
  private running = 0;
  private waiting = 0;
  private readonly runningBy = new Map<string, number>();
  /** Waiting work of each owner that has some, oldest first. */
  private readonly queues = new Map<string, Waiter[]>();
  /** When each owner with work running or waiting last got a slot (a count of turns given). */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;
  private readonly inFlightBy = new Map<string, number>();
  private inFlight = 0;
  private refused = 0;

  private readonly slots: number;
  private readonly ownerSlots: number;
  private readonly tenantInflight: number;

  constructor(opts: EngineAdmissionOptions = {}) {
    this.slots = opts.slots ?? ENGINE_SLOTS;
    this.ownerSlots = opts.ownerSlots ?? Math.max(1, this.slots - 1);
    this.tenantInflight = opts.tenantInflight ?? Infinity;
    if (!(this.slots >= 1) || !(this.tenantInflight >= 1)) throw new RangeError('slots and tenantInflight must be at least 1');
  }

  /**
   * Count one engine request of `tenantId` until the ticket's leave(); 429 too_many_in_flight
   * (Retry-After: 1) when the tenant already has its limit in flight. Synchronous: nothing is read or
   * started before the answer.
   */
  enter(tenantId: string): InFlightTicket {
    const count = this.inFlightBy.get(tenantId) ?? 0;
    if (count >= this.tenantInflight) {
      this.refused++;
      throw new ProblemError(429, 'too_many_in_flight',
        `tenant ${tenantId} already has ${count} engine requests (put, serve, similarity, top-K) in flight, its limit; retry in 1 s`,
        { limit: this.tenantInflight, retry_after_s: 1 }, { 'Retry-After': '1' });
    }
    this.inFlightBy.set(tenantId, count + 1);
    this.inFlight++;
    let left = false;
    return {
      leave: () => {
        if (left) return;
        left = true;
        this.inFlight--;
        const n = this.inFlightBy.get(tenantId)! - 1;
        if (n === 0) this.inFlightBy.delete(tenantId);
        else this.inFlightBy.set(tenantId, n);
      },
    };
  }

  /**
   * Run `work` in a slot, in `turn.owner`'s turn. The slot is given back when the work settles; a
   * turn whose signal aborts while it waits leaves the queue and rejects (503 service_unavailable:
   * nobody is left to read it), without running the work.
   */
  async run<T>(turn: Turn, work: () => Promise<T>): Promise<T> {
    const { owner, signal } = turn;
    if (signal?.aborted) throw abandoned();
    if (this.running < this.slots && (this.runningBy.get(owner) ?? 0) < this.ownerSlots && !this.queues.has(owner)) this.take(owner);
    else await this.wait(owner, signal);
    try {
      return await work();
    } finally {
      this.give(owner);
    }
  }

  stats(): EngineAdmissionStats {
    return { slots: this.slots, running: this.running, waiting: this.waiting, inFlight: this.inFlight, refused: this.refused };
  }

  private wait(owner: string, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const queue = this.queues.get(owner);
        const i = queue ? queue.indexOf(waiter) : -1;
        if (i < 0) return; // already started
        queue!.splice(i, 1);
        if (queue!.length === 0) this.queues.delete(owner);
        this.waiting--;
        this.forgetIdle(owner);
        reject(abandoned());
      };
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const queue = this.queues.get(owner);
      if (queue) queue.push(waiter);
      else this.queues.set(owner, [waiter]);
      this.waiting++;
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private take(owner: string): void {
    this.running++;
    this.runningBy.set(owner, (this.runningBy.get(owner) ?? 0) + 1);
    this.lastTurn.set(owner, ++this.turns);
  }

  private give(owner: string): void {
    this.running--;
    const n = this.runningBy.get(owner)! - 1;
    if (n === 0) this.runningBy.delete(owner);
    else this.runningBy.set(owner, n);
    this.forgetIdle(owner);
    while (this.running < this.slots && this.startNext());
  }

  /** An owner with nothing running or waiting keeps no state (its next turn comes first). */
  private forgetIdle(owner: string): void {
    if (!this.runningBy.has(owner) && !this.queues.has(owner)) this.lastTurn.delete(owner);
  }

  /**
   * The waiting owner with the fewest slots in use (below its limit), then the oldest last turn,
   * starts its oldest work; false when no waiting owner may start now.
   */
  private startNext(): boolean {
    let best: string | undefined;
    let bestRunning = Infinity;
    let bestTurn = Infinity;
    for (const owner of this.queues.keys()) {
      const r = this.runningBy.get(owner) ?? 0;
      if (r >= this.ownerSlots) continue;
      const t = this.lastTurn.get(owner) ?? 0;
      if (r < bestRunning || (r === bestRunning && t < bestTurn)) {
        best = owner;
        bestRunning = r;
        bestTurn = t;
      }
    }
    if (best === undefined) return false;
    const queue = this.queues.get(best)!;
    const waiter = queue.shift()!;
    if (queue.length === 0) this.queues.delete(best);
    this.waiting--;
    this.take(best);
    waiter.start();
    return true;
  }
}

/** The answer to a request whose client went away before its work started (nobody reads it). */
export function abandoned(): ProblemError {
  return new ProblemError(503, 'service_unavailable', 'the request was abandoned by its client before its engine turn came');
}
