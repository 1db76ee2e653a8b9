// Request bodies (CONTRACT.md section 8). Every route's body is read by one middleware, bodyReader,
// which Api.mount puts right after the gate (authentication and rate limit come first) and builds
// from the route's description: a Content-Encoding other than identity is 415 before a byte is read;
// a JSON body over its route's limit is 413 from Content-Length, before reading (a chunked one as
// soon as it passes the limit); it is parsed as it arrives (codec/json-reader.ts), its depth and
// structure checked on the way and its array data decoded from base64 where the route's schema puts
// it, and a problem found in its middle is answered there. The binary put's raw body is read by its
// handler with readRawBody, under the same rules. A long body left unread when the answer goes out is
// not drained: the connection closes (app.ts).
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware, Next } from 'koa';
import type { Endpoint } from './endpoint.js';
import { JsonReader, type DataPaths, type JsonReaderLimits } from '../codec/json-reader.js';
import { badRequest, excerpt, payloadTooLarge, unsupportedMediaType } from './errors.js';
import { BODY_MAX_DEPTH, jsonBodyBytes, jsonStructureBytes, UNREAD_BODY_DRAIN_BYTES } from '../limits/input.js';
import type { BufferPool } from '../runtime/buffer-pool.js';
import type { Schema } from './schema/types.js';
import { JSON_STRUCTURE_HOLD, type RequestAdmission, type RouteAdmission } from './admission.js';

declare module 'koa' {
  interface Request {
    /** The route's JSON body, parsed by bodyReader (an object), when it has one. */
    body?: unknown;
  }
}

/** True when the request carries body bytes (chunked, or a Content-Length above 0). */
export function requestHasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Stop reading a body refused in its middle: one the answer closes the connection on (chunked, or
 * declared longer than UNREAD_BODY_DRAIN_BYTES, app.ts) is left unread; a shorter one is read on and
 * dropped, as Node does for a body nobody read, so the client's connection stays usable.
 */
function stopReading(req: IncomingMessage): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) <= UNREAD_BODY_DRAIN_BYTES) req.resume();
  else req.pause();
}

/** Body as a plain object (400 otherwise). */
export function bodyObject(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body as unknown;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object');
  return body as Record<string, unknown>;
}

export interface BodyOptions {
  maxPayloadBytes: number;
  /** On tenant routes: the byte budget a body's bytes are reserved in before they are read. */
  admission?: RouteAdmission;
}

/** Where a schema puts array data: its strings of format `byte` (base64), by member name and `*` for array items. */
export function dataPathsOf(sc: Schema): DataPaths | true | null {
  if (sc.type === 'string') return sc.format === 'byte' ? true : null;
  if (sc.type === 'array') {
    const items = dataPathsOf(sc.items);
    return items === null ? null : { '*': items };
  }
  if (sc.type !== 'object') return null;
  const out: DataPaths = {};
  for (const [name, p] of Object.entries(sc.properties)) {
    const d = dataPathsOf(p);
    if (d !== null) out[name] = d;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * The body middleware of endpoint `ep`: 415 for a Content-Encoding other than identity, or for a
 * content type the route does not take; a JSON body read within the route's limit, parsed as it
 * arrives into ctx.request.body (400 when malformed or not an object, or absent and required; its
 * array data as Base64Data). The raw forms a route takes (the binary put) are left to its handler.
 */
export function bodyReader(ep: Endpoint, opts: BodyOptions): Middleware {
  const body = ep.body;
  const limit = body?.json ? jsonBodyBytes(body.limit, opts.maxPayloadBytes) : 0;
  const data = body?.json ? dataPathsOf(body.json) : null;
  const jsonLimits = body?.json
    ? {
        maxDepth: BODY_MAX_DEPTH,
        maxStructureBytes: jsonStructureBytes(body.limit),
        ...(data !== null && data !== true ? { data } : {}),
      }
    : null;
  const raw = Object.keys(body?.raw ?? {});
  const takes = [...(body?.json ? ['application/json'] : []), ...raw].join(' or ');
  return async function readBody(ctx: Context, next: Next): Promise<void> {
    if (!requestHasBody(ctx.req)) {
      if (body?.required) throw badRequest(`a body is required (${takes})`);
      return next();
    }
    const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity') {
      throw unsupportedMediaType(`Content-Encoding ${excerpt(encoding)} is not supported: send the body as it is (identity)`);
    }
    if (!body) return next(); // a body this route does not read stays unread
    if (raw.length > 0 && ctx.is(raw)) return next();
    if (!body.json || !ctx.is('application/json', '+json')) {
      throw unsupportedMediaType(
        `${ep.method.toUpperCase()} ${ep.path} takes ${takes}, got ${excerpt(ctx.get('Content-Type')) || 'no content type'}`,
      );
    }
    const admission = opts.admission?.of(ctx);
    if (opts.admission) await opts.admission.holdBody(ctx, limit);
    ctx.request.body = await readJsonBody(ctx, limit, jsonLimits!, admission);
    return next();
  };
}

/** Input handed to the JSON reader between two turns of the event loop (a socket's chunk is at most this). */
const JSON_STEP_BYTES = 64 * 1024;

/** Checks a body's length as it arrives: a declared one exactly, an undeclared one under `limit`. */
function bodyLength(req: IncomingMessage, limit: number): number | null {
  const declared = req.headers['content-length'];
  if (declared === undefined) return null;
  const expected = Number(declared);
  if (!Number.isSafeInteger(expected) || expected < 0) throw badRequest('bad Content-Length');
  if (expected > limit) throw payloadTooLarge(`request body of ${expected} bytes exceeds the limit of ${limit} bytes`);
  return expected;
}

/**
 * Listen to a request body until the returned function is called: its chunks, its end, and a read
 * that breaks (a socket error or an aborted upload: `fail` gets the 400).
 */
function listenToBody(req: IncomingMessage, onData: (chunk: Buffer) => void, onEnd: () => void, fail: (err: Error) => void): () => void {
  const onError = (err: Error) => fail(badRequest(`request body could not be read: ${err.message}`));
  const onAborted = () => fail(badRequest('request body was aborted'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
  return () => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
  };
}

const longerThanDeclared = () => badRequest('request body is longer than its Content-Length');
const shorterThanDeclared = () => badRequest('request body is shorter than its Content-Length');
const overLimit = (limit: number) => payloadTooLarge(`request body exceeds the limit of ${limit} bytes`);

/** A hold grows by whole steps of this much (not at every few bytes of structure). */
const HOLD_STEP_BYTES = 64 * 1024;

/**
 * A JSON body, at most `limit` bytes, parsed as it arrives (JsonReader): each chunk is walked when
 * it lands (a larger one a step at a time, with turns of the event loop between), and the first
 * problem the reader finds fails the read there, the rest unread. `admission`'s hold, which has the
 * declared length already (RouteAdmission.holdBody), grows with what arrives undeclared and by
 * JSON_STRUCTURE_HOLD for each byte of structure; while a growth waits, the reading is paused, and
 * one that cannot be had fails the read (503 overloaded).
 */
export function readJsonBody(
  ctx: Context,
  limit: number,
  limits: Omit<JsonReaderLimits, 'maxBodyBytes'>,
  admission?: RequestAdmission,
): Promise<Record<string, unknown>> {
  const req = ctx.req;
  const expected = bodyLength(req, limit);
  const reader = new JsonReader({ ...limits, maxBodyBytes: expected ?? limit });
  return new Promise((resolve, reject) => {
    let ended = false;
    let busy = false;
    let done = false;
    let grown = 0; // beyond the declared length
    let waiting = false;
    let stopListening = () => {};
    const cleanup = () => {
      done = true;
      stopListening();
    };
    const fail = (err: unknown) => {
      if (done) return;
      cleanup();
      stopReading(req);
      reject(err);
    };
    const finish = () => {
      if (done) return;
      cleanup();
      if (expected !== null && reader.received !== expected) {
        reject(shorterThanDeclared());
        return;
      }
      try {
        resolve(reader.end());
      } catch (err) {
        reject(err);
      }
    };
    /** Grow the hold to what the reader holds now; false when the reading must wait for it. */
    const holdEnough = (): boolean => {
      if (!admission) return true;
      if (waiting) return false; // the growth under way checks again when it is had
      const need = (expected === null ? reader.received : 0) + JSON_STRUCTURE_HOLD * reader.structureBytes;
      if (need <= grown) return true;
      const more = Math.ceil((need - grown) / HOLD_STEP_BYTES) * HOLD_STEP_BYTES;
      grown += more;
      if (admission.hold.tryGrow(more)) return true;
      req.pause();
      waiting = true;
      admission.hold.grow(more, admission.turn.signal).then(() => {
        waiting = false;
        if (busy || done || !holdEnough()) return;
        if (ended) finish();
        else req.resume();
      }, fail);
      return false;
    };
    const onData = (chunk: Buffer) => {
      if (reader.received + chunk.length > (expected ?? limit)) {
        fail(expected !== null ? longerThanDeclared() : overLimit(limit));
        return;
      }
      if (chunk.length <= JSON_STEP_BYTES) {
        try {
          reader.write(chunk);
        } catch (err) {
          fail(err);
          return;
        }
        holdEnough();
        return;
      }
      // A large chunk: a step at a time, the request paused meanwhile.
      req.pause();
      busy = true;
      let at = 0;
      const step = () => {
        if (done) return;
        try {
          reader.write(chunk.subarray(at, at + JSON_STEP_BYTES));
        } catch (err) {
          fail(err);
          return;
        }
        at += JSON_STEP_BYTES;
        if (at < chunk.length) {
          setImmediate(step);
          return;
        }
        busy = false;
        if (!holdEnough()) return;
        if (ended) finish();
        else req.resume();
      };
      step();
    };
    const onEnd = () => {
      ended = true;
      if (!busy && !waiting) finish();
    };
    stopListening = listenToBody(req, onData, onEnd, fail);
  });
}

/**
 * The raw request body in one buffer, at most `limit` bytes: a declared Content-Length over the limit
 * is refused before reading; a chunked body is counted as it arrives and refused at the limit. With a
 * Content-Length the buffer comes from `pool` and the caller releases it when done (on success), and
 * `watch.observe(buffer, received)` is called after each chunk lands in it (work that overlaps the
 * upload; an error it returns refuses the body there, unread beyond); on failure the buffer goes
 * back to the pool once `watch.settled()` resolves (that work no longer reads it). A chunked body
 * grows `admission`'s hold as it arrives (twice: the chunks and their joined copy), the reading
 * paused while a growth waits; one that cannot grow fails the read (503 overloaded). A declared
 * length was reserved before (RouteAdmission.holdBody).
 */
export async function readRawBody(
  ctx: Context,
  limit: number,
  pool: BufferPool,
  watch?: { observe(body: Buffer, received: number): Error | undefined; settled(): Promise<void> },
  admission?: RequestAdmission,
): Promise<Buffer> {
  const req = ctx.req;
  const expected = bodyLength(req, limit);
  return new Promise<Buffer>((resolve, reject) => {
    // Known length: one buffer filled in place. Unknown: chunks, joined once at the end.
    const whole = expected !== null ? pool.acquire(expected) : null;
    const chunks: Buffer[] = [];
    let received = 0;
    let cleanup = () => {};
    const giveBack = () => {
      if (!whole) return;
      if (watch) void watch.settled().then(() => pool.release(whole));
      else pool.release(whole);
    };
    const fail = (err: Error) => {
      cleanup();
      giveBack();
      stopReading(req);
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > (whole ? whole.length : limit)) {
        fail(whole ? longerThanDeclared() : overLimit(limit));
        return;
      }
      if (whole) {
        chunk.copy(whole, received);
      } else {
        chunks.push(chunk);
        if (admission && !admission.hold.tryGrow(2 * chunk.length)) {
          req.pause();
          admission.hold.grow(2 * chunk.length, admission.turn.signal).then(() => req.resume(), fail);
        }
      }
      received += chunk.length;
      const refused = whole && watch ? watch.observe(whole, received) : undefined;
      if (refused) fail(refused);
    };
    const onEnd = () => {
      cleanup();
      if (whole) {
        if (received !== whole.length) {
          giveBack();
          reject(shorterThanDeclared());
        } else {
          resolve(whole);
        }
      } else {
        resolve(Buffer.concat(chunks, received));
      }
    };
    cleanup = listenToBody(req, onData, onEnd, fail);
  });
}
