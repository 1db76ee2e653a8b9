// Request bodies (CONTRACT.md section 8). Every route's body is read by one middleware, bodyReader,
// which Api.mount puts right after the gate (authentication and rate limit come first) and builds
// from the route's description: a Content-Encoding other than identity is 415 before a byte is read;
// a JSON body over its route's limit is 413 from Content-Length, before reading (a chunked one as
// soon as it passes the limit); its text is checked for depth and structure (codec/json.ts) before
// it is parsed. The binary put's raw body is read by its handler with readRawBody, under the same
// rules. A long body left unread when the answer goes out is not drained: the connection closes (app.ts).
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware, Next } from 'koa';
import type { Endpoint } from '../api/endpoint.js';
import { checkJsonText, parseJsonObject } from '../codec/json.js';
import { badRequest, excerpt, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import { BODY_MAX_DEPTH, jsonBodyBytes, jsonStructureBytes } from '../input-limits.js';
import type { BufferPool } from '../buffer-pool.js';
import type { RequestAdmission, RouteAdmission } from './admission.js';

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

/** Body as a plain object (400 otherwise). */
export function bodyObject(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body as unknown;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object');
  return body as Record<string, unknown>;
}

export interface BodyOptions {
  maxPayloadBytes: number;
  /** Buffers for bodies of a declared length (given back once parsed). */
  pool: BufferPool;
  /** On tenant routes: the byte budget a body's bytes are reserved in before they are read. */
  admission?: RouteAdmission;
}

/**
 * The body middleware of endpoint `ep`: 415 for a Content-Encoding other than identity, or for a
 * content type the route does not take; a JSON body read within the route's limit, checked and
 * parsed into ctx.request.body (400 when malformed or not an object, or absent and required). The
 * raw forms a route takes (the binary put) are left to its handler.
 */
export function bodyReader(ep: Endpoint, opts: BodyOptions): Middleware {
  const body = ep.body;
  const limit = body?.json ? jsonBodyBytes(body.limit, opts.maxPayloadBytes) : 0;
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
      throw unsupportedMediaType(`${ep.method.toUpperCase()} ${ep.path} takes ${takes}, got ${excerpt(ctx.get('Content-Type')) || 'no content type'}`);
    }
    const held = opts.admission ? opts.admission.of(ctx) : undefined;
    if (opts.admission) await opts.admission.holdBody(ctx, limit);
    const bytes = await readRawBody(ctx, limit, opts.pool, undefined, held);
    try {
      checkJsonText(bytes, { maxDepth: BODY_MAX_DEPTH, maxStructureBytes: jsonStructureBytes(body.limit) });
      ctx.request.body = parseJsonObject(bytes);
    } finally {
      opts.pool.release(bytes);
    }
    return next();
  };
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
export async function readRawBody(ctx: Context, limit: number, pool: BufferPool,
  watch?: { observe(body: Buffer, received: number): Error | undefined; settled(): Promise<void> },
  admission?: RequestAdmission): Promise<Buffer> {
  const req = ctx.req;
  const declared = req.headers['content-length'];
  let expected: number | null = null;
  if (declared !== undefined) {
    expected = Number(declared);
    if (!Number.isSafeInteger(expected) || expected < 0) throw badRequest('bad Content-Length');
    if (expected > limit) throw payloadTooLarge(`request body of ${expected} bytes exceeds the limit of ${limit} bytes`);
  }
  return new Promise<Buffer>((resolve, reject) => {
    // Known length: one buffer filled in place. Unknown: chunks, joined once at the end.
    const whole = expected !== null ? pool.acquire(expected) : null;
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    };
    const giveBack = () => {
      if (!whole) return;
      if (watch) void watch.settled().then(() => pool.release(whole));
      else pool.release(whole);
    };
    const fail = (err: Error) => {
      cleanup();
      giveBack();
      req.pause(); // read no more: the connection closes after the answer
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > (whole ? whole.length : limit)) {
        fail(whole ? badRequest('request body is longer than its Content-Length')
          : payloadTooLarge(`request body exceeds the limit of ${limit} bytes`));
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
          reject(badRequest('request body is shorter than its Content-Length'));
        } else {
          resolve(whole);
        }
      } else {
        resolve(Buffer.concat(chunks, received));
      }
    };
    const onError = (err: Error) => fail(badRequest(`request body could not be read: ${err.message}`));
    const onAborted = () => fail(badRequest('request body was aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
