// Admission on the routes (CONTRACT.md section 8): an engine request (put, serve, similarity, top-K) is
// counted against its tenant before its body is read, and every request that holds large data (a
// body, a dense result, a streamed answer) reserves those bytes in the byte budget before it
// allocates them. Both are given back when the response is done or the client is gone.
import type { Context, Middleware, Next } from 'koa';
import { badRequest } from '../errors.js';
import type { ByteBudget, Hold } from '../admission/byte-budget.js';
import { abandoned, type EngineAdmission, type InFlightTicket, type Turn } from '../admission/engine-admission.js';
import type { GateState } from '../gate/context.js';

/**
 * A JSON body carrying array data is held about three times while a request uses it: the text as
 * read, the strings JSON.parse makes of it, and the bytes decoded from base64 (each at most its size).
 */
export const JSON_BODY_COPIES = 3;

/** What one request has been admitted with. */
export interface RequestAdmission {
  /** The tenant's turn for engine work; its signal aborts when the client goes away early. */
  turn: Turn;
  /** The bytes the request holds, released with its response. */
  hold: Hold;
}

interface AdmissionState extends RequestAdmission {
  ticket: InFlightTicket | null;
}

const STATE = Symbol('admission');

export class RouteAdmission {
  /** Route middleware (after the tenant gate): 429 too_many_in_flight over the tenant's limit. */
  readonly engineRequest: Middleware;

  constructor(readonly engine: EngineAdmission, readonly budget: ByteBudget) {
    this.engineRequest = async (ctx: Context, next: Next): Promise<void> => {
      const state = this.state(ctx);
      if (state.turn.signal?.aborted) throw abandoned();
      state.ticket ??= engine.enter(state.turn.owner);
      await next();
    };
  }

  /** The request's turn and hold (made on first use; given back when the response closes). */
  of(ctx: Context): RequestAdmission {
    return this.state(ctx);
  }

  /**
   * Reserve what reading the body will hold, before a byte of it is read: from Content-Length (JSON
   * bodies JSON_BODY_COPIES times), or, for a chunked JSON body, as much as `limit` admits (the JSON
   * reader takes it whole); a chunked raw body grows its hold as it arrives (readRawBody). A declared
   * length over `limit` reserves nothing: the reader answers 413 without reading.
   */
  async holdBody(ctx: Context, limit: number): Promise<void> {
    const { hold, turn } = this.state(ctx);
    const copies = ctx.is('application/json', '+json') ? JSON_BODY_COPIES : 1;
    const declared = ctx.get('Content-Length');
    if (declared === '') {
      if (copies > 1) await hold.grow(limit * copies, turn.signal);
      return;
    }
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) throw badRequest('bad Content-Length');
    if (length <= limit) await hold.grow(length * copies, turn.signal);
  }

  private state(ctx: Context): AdmissionState {
    const held = (ctx.state as Record<symbol, AdmissionState | undefined>)[STATE];
    if (held) return held;
    const owner = (ctx.state as GateState).tenant.tenantId;
    const abort = new AbortController();
    const state: AdmissionState = { turn: { owner, signal: abort.signal }, hold: this.budget.open(owner), ticket: null };
    (ctx.state as Record<symbol, AdmissionState>)[STATE] = state;
    const res = ctx.res;
    const end = () => {
      if (!res.writableFinished) abort.abort();
      state.hold.release();
      state.ticket?.leave();
    };
    // A client gone before now emitted 'close' already: the request ends here.
    if (res.destroyed || res.socket === null || res.socket.destroyed) end();
    else res.once('close', end);
    return state;
  }
}
