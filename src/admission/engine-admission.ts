// Admission of engine work (CONTRACT.md section 8): slots given out in fair turns across tenants,
// and a cap on the engine requests one tenant has in flight. Each tenant waits in its own queue; when
// a slot frees, the waiting tenant with the fewest slots in use goes next, and among those the one
// whose last turn is oldest (round-robin), so another tenant's request waits at most for work already
// running, never behind the first tenant's queue. One tenant uses at most all slots but one, so the
// next tenant's work usually starts at once.
//
// Work comes in two lanes by its estimated size. Heavy work (a large compression, a dense rebuild of
// a large array, a chunk of a top-K) can run for seconds, and two tenants together can hold every
// heavy slot; light work (at most LIGHT_TURN_WORK multiply-adds, milliseconds) has slots of its own,
// so a small put or serve never waits for a heavy call, only for other light work. The engine shares
// the cores among the calls running at once. The module knows tenants, slots and work estimates,
// never tensors.
import { LIGHT_TURN_WORK } from '../engine/limits.js';
import { ProblemError } from '../http/errors.js';

/** Heavy engine calls running at once (they share the cores, so more only contend). */
export const ENGINE_SLOTS = 2;

/** Light engine calls running at once, beside the heavy ones. */
export const LIGHT_SLOTS = 2;

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
  /** Heavy engine calls running at once. Default ENGINE_SLOTS. */
  slots?: number;
  /** Heavy slots one owner may use at once. Default: all but one (one slot always free for the others). */
  ownerSlots?: number;
  /** Light engine calls running at once (one owner: all but one). Default LIGHT_SLOTS. */
  lightSlots?: number;
  /** Largest estimated work (multiply-adds) that runs in the light lane. Default LIGHT_TURN_WORK. */
  lightWork?: number;
  /** Engine requests one tenant may have in flight (running or waiting); more: 429. Default: no limit. */
  tenantInflight?: number;
}

export interface LaneStats {
  slots: number;
  running: number;
  /** Engine calls waiting for a slot. */
  waiting: number;
}

export interface EngineAdmissionStats extends LaneStats {
  heavy: LaneStats;
  light: LaneStats;
  /** Engine requests in flight, all tenants together. */
  inFlight: number;
  /** Requests refused with too_many_in_flight since start. */
  refused: number;
}

interface Waiter {
  start(): void;
}

/**
 * A set of slots given out in fair turns: each owner waits in its own queue; when a slot frees, the
 * waiting owner with the fewest slots in use goes next, and among those the one whose last turn is
 * oldest (round-robin). One owner uses at most `ownerSlots` at once.
 */
class Lane {
  running = 0;
  waiting = 0;
  private readonly runningBy = new Map<string, number>();
  /** Waiting work of each owner that has some, oldest first. */
  private readonly queues = new Map<string, Waiter[]>();
  /** When each owner with work running or waiting last got a slot (a count of turns given). */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;

  constructor(
    readonly slots: number,
    private readonly ownerSlots: number,
  ) {}

  async run<T>(owner: string, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots && (this.runningBy.get(owner) ?? 0) < this.ownerSlots && !this.queues.has(owner)) this.take(owner);
    else await this.wait(owner, signal);
    try {
      return await work();
    } finally {
      this.give(owner);
    }
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

export class EngineAdmission {
  private readonly heavy: Lane;
  private readonly light: Lane;
  private readonly lightWork: number;
  private readonly inFlightBy = new Map<string, number>();
  private inFlight = 0;
  private refused = 0;
  private readonly tenantInflight: number;

  constructor(opts: EngineAdmissionOptions = {}) {
    const slots = opts.slots ?? ENGINE_SLOTS;
    const lightSlots = opts.lightSlots ?? LIGHT_SLOTS;
    this.tenantInflight = opts.tenantInflight ?? Infinity;
    if (!(slots >= 1) || !(lightSlots >= 1) || !(this.tenantInflight >= 1)) {
      throw new RangeError('slots, lightSlots and tenantInflight must be at least 1');
    }
    this.heavy = new Lane(slots, opts.ownerSlots ?? Math.max(1, slots - 1));
    this.light = new Lane(lightSlots, Math.max(1, lightSlots - 1));
    this.lightWork = opts.lightWork ?? LIGHT_TURN_WORK;
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
      throw new ProblemError(
        429,
        'too_many_in_flight',
        `tenant ${tenantId} already has ${count} engine requests (put, serve, similarity, top-K) in flight, its limit; retry in 1 s`,
        { limit: this.tenantInflight, retry_after_s: 1 },
        { 'Retry-After': '1' },
      );
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
   * Run `work` in a slot, in `turn.owner`'s turn: in the light lane when its estimated work
   * (multiply-adds, src/engine/limits.ts) is at most LIGHT_TURN_WORK, else (or unknown) in the heavy
   * lane. The slot is given back when the work settles; a turn whose signal aborts while it waits
   * leaves the queue and rejects (503 service_unavailable: nobody is left to read it), without
   * running the work.
   */
  run<T>(turn: Turn, work: () => Promise<T>, estimatedWork = Infinity): Promise<T> {
    const { owner, signal } = turn;
    if (signal?.aborted) return Promise.reject(abandoned());
    return (estimatedWork <= this.lightWork ? this.light : this.heavy).run(owner, signal, work);
  }

  stats(): EngineAdmissionStats {
    const { heavy, light } = this;
    return {
      slots: heavy.slots + light.slots,
      running: heavy.running + light.running,
      waiting: heavy.waiting + light.waiting,
      inFlight: this.inFlight,
      refused: this.refused,
      heavy: { slots: heavy.slots, running: heavy.running, waiting: heavy.waiting },
      light: { slots: light.slots, running: light.running, waiting: light.waiting },
    };
  }
}

/** The answer to a request whose client went away before its work started (nobody reads it). */
export function abandoned(): ProblemError {
  return new ProblemError(503, 'service_unavailable', 'the request was abandoned by its client before its engine turn came');
}
