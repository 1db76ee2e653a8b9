// Request bodies of the storage routes: JSON (koa-body, sized to admit a base64 payload of the largest
// allowed array) and the raw body of the binary upload form, read with a streaming byte limit into one
// buffer. Both run after the gate (authentication and rate limit come first).
import type { Context, Middleware, Next } from 'koa';
import { koaBody } from 'koa-body';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import type { BufferPool } from '../buffer-pool.js';
import type { RequestAdmission } from './admission.js';

/** Bytes allowed for an .npy header beyond the payload limit (the limit counts the array data). */
export const NPY_HEADER_ALLOWANCE = 64 * 1024;
/** Room for the other JSON fields (key, metadata, ...) beside data_b64. */
const JSON_SLACK = 2 * 1024 * 1024;

/** JSON body limit that admits data_b64 of a payload of `maxPayloadBytes` (base64: 4/3). */
export function jsonLimitFor(maxPayloadBytes: number): number {
  return Math.ceil((maxPayloadBytes + NPY_HEADER_ALLOWANCE) / 3) * 4 + JSON_SLACK;
}

/** Body as a plain object (400 otherwise). */
export function bodyObject(ctx: Context): Record<string, unknown> {
  const body = ctx.request.body as unknown;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Parse a JSON object body: 415 for another content type, 413 over `limit` bytes, 400 when malformed. */
export function jsonBody(limit: number): Middleware {
  const parse = koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: limit, jsonStrict: true });
  return async function parseJsonBody(ctx: Context, next: Next): Promise<void> {
    await readJson(ctx, parse);
    await next();
  };
}

export async function readJson(ctx: Context, parse: Middleware): Promise<void> {
  const is = ctx.is('application/json', '+json');
  if (is === null) throw badRequest('a JSON body is required');
  if (is === false) throw unsupportedMediaType(`this endpoint takes application/json, got ${ctx.get('Content-Type') || 'no content type'}`);
  await parse(ctx, async () => undefined);
  bodyObject(ctx);
}

/** The JSON parser middleware itself (for routes that pick the body form at run time). */
export function jsonParser(limit: number): Middleware {
  return koaBody({ json: true, multipart: false, urlencoded: false, text: false, jsonLimit: limit, jsonStrict: true });
}

/**
 * The raw request body in one buffer, at most `limit` bytes: a declared Content-Length over the limit
 * is refused before reading; a chunked body is counted as it arrives and refused at the limit. With a
 * Content-Length the buffer comes from `pool` and the caller releases it when done (on success), and
 * `watch.observe(buffer, received)` is called after each chunk lands in it (work that overlaps the
 * upload); on failure the buffer goes back to the pool once `watch.settled()` resolves (that work no
 * longer reads it). A chunked body grows `admission`'s hold as it arrives (twice: the chunks and
 * their joined copy), the reading paused while a growth waits; one that cannot grow fails the read
 * (503 overloaded). A declared length was reserved before (RouteAdmission.holdBody).
 */
export async function readRawBody(ctx: Context, limit: number, pool: BufferPool,
  watch?: { observe(body: Buffer, received: number): void; settled(): Promise<void> },
  admission?: RequestAdmission): Promise<Buffer> {
  const req = ctx.req;
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') throw unsupportedMediaType(`Content-Encoding ${encoding} is not supported on the binary form`);
  const declared = req.headers['content-length'];
  let expected: number | null = null;
  if (declared !== undefined) {
    expected = Number(declared);
    if (!Number.isSafeInteger(expected) || expected < 0) throw badRequest('bad Content-Length');
    if (expected > limit) {
      req.resume();
      throw payloadTooLarge(`request body of ${expected} bytes exceeds the limit of ${limit} bytes`);
    }
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
      req.resume(); // discard the rest so the answer can go out
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
      if (whole && watch) watch.observe(whole, received);
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
