// Admission on the routes (CONTRACT.md section 8): an engine request (put, serve, similarity, top-K) is
// counted against its tenant before its body is read, and every request that holds large data (a
// body, a dense result, a streamed answer) reserves those bytes in the byte budget before it
// allocates them. Both are given back when the response is done or the client is gone.
import type { Context, Middleware, Next } from 'koa';
import { badRequest } from './errors.js';
import type { ByteBudget, Hold } from '../admission/byte-budget.js';
import { abandoned, type EngineAdmission, type InFlightTicket, type Turn } from '../admission/engine-admission.js';
import type { GateState } from '../gate/context.js';

/**
 * What a JSON body holds beyond its own length, for each byte of its structure (syntax, numbers and
 * escapes: codec/json-reader.ts counts them). A body read as it arrives holds about its length: its
 * array data decoded (3 bytes for 4 of base64), its strings (slices of the pieces of text they were
 * parsed from), a few pieces of text (a 341 MiB put grew the server by 272 MiB, the worst 63 MiB batch
 * by 103 MiB). The values made of its structure hold more than their text: an array of 4 million {}
 * took 20 bytes of heap and 29 of resident memory for each byte of its text, [] 12, numbers 3.
 */
export const JSON_STRUCTURE_HOLD = 32;

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

  constructor(
    readonly engine: EngineAdmission,
    readonly budget: ByteBudget,
  ) {
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
   * Reserve what reading the body will hold, before a byte of it is read: its Content-Length (a
   * body, raw or JSON, holds about its length). A chunked body grows its hold as it arrives, and a
   * JSON body grows it by JSON_STRUCTURE_HOLD for each byte of structure the reader parses
   * (readRawBody, readJsonBody). A declared length over `limit` reserves nothing: the reader answers
   * 413 without reading.
   */
  async holdBody(ctx: Context, limit: number): Promise<void> {
    const { hold, turn } = this.state(ctx);
    const declared = ctx.get('Content-Length');
    if (declared === '') return;
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0) throw badRequest('bad Content-Length');
    if (length <= limit) await hold.grow(length, turn.signal);
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
