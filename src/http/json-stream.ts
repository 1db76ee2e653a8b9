// Large JSON responses written as a stream of pieces (CONTRACT.md section 8): the base64 of a dense
// array or of cores, and long result lists, are encoded a piece at a time as the client reads, never
// held as one giant string or Buffer. The bytes are those JSON.stringify would give for the same
// object (its last field is the long one), so clients see no difference.
import { Readable } from 'node:stream';
import type { Context } from 'koa';

/**
 * Input bytes per base64 piece: a multiple of 3 (no padding inside), 64 KiB of output, a string small
 * enough for V8's young generation (pieces of 512 KiB went to the large-object space: 8 serves of
 * 64 MiB grew the server by 145-176 MiB against 100-107 MiB with these, at the same speed).
 */
const PIECE_BYTES = 3 * 16 * 1024;
/** Short pieces (field names, brackets, small cores) are joined up to this many characters. */
const COALESCE_CHARS = 64 * 1024;
/** Results of a long list stringified at a time. */
const LIST_BATCH = 16;

/** Characters of the base64 form of `n` bytes (padded). */
export function base64Length(n: number): number {
  return Math.ceil(n / 3) * 4;
}

/**
 * What a streamed response holds beside its data: a piece being encoded, one in the stream's buffer
 * and one in the socket's, with room to spare. Callers reserve it in the byte budget.
 */
export const STREAM_HELD_BYTES = 4 * base64Length(PIECE_BYTES);

/** The bytes a streamed response of `encodedBytes` holds at most while it is written. */
export function streamHeldBytes(encodedBytes: number): number {
  return Math.min(encodedBytes, STREAM_HELD_BYTES);
}

/** `{"a":1,...,"<field>":` of `head` (JSON.stringify's text without the closing brace). */
export function jsonOpen(head: Record<string, unknown>, field: string): string {
  const text = JSON.stringify(head);
  return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(field)}:`;
}

/** The base64 of the concatenation of `parts`, a piece at a time (the pieces join to one valid string). */
export function* base64Pieces(parts: readonly Uint8Array[]): Generator<string> {
  let carry: Buffer | null = null; // < 3 bytes left over from the previous part
  for (const part of parts) {
    let bytes = Buffer.from(part.buffer, part.byteOffset, part.byteLength);
    if (carry) {
      const take = Math.min(3 - carry.length, bytes.length);
      carry = Buffer.concat([carry, bytes.subarray(0, take)]);
      bytes = bytes.subarray(take);
      if (carry.length < 3) continue;
      yield carry.toString('base64');
      carry = null;
    }
    const whole = bytes.length - (bytes.length % 3);
    for (let o = 0; o < whole; o += PIECE_BYTES) yield bytes.subarray(o, Math.min(o + PIECE_BYTES, whole)).toString('base64');
    if (whole < bytes.length) carry = Buffer.from(bytes.subarray(whole));
  }
  if (carry) yield carry.toString('base64');
}

/** JSON text to be written a piece at a time, and its length in bytes. */
export interface JsonPieces {
  pieces: Iterable<string>;
  byteLength: number;
}

/** `fields` with `[field]: <base64 of parts>` as its last field. */
export function withBase64(fields: Record<string, unknown>, field: string, parts: readonly Uint8Array[]): JsonPieces {
  const open = `${jsonOpen(fields, field)}"`;
  const bytes = parts.reduce((n, p) => n + p.byteLength, 0);
  return {
    byteLength: Buffer.byteLength(open) + base64Length(bytes) + 2,
    pieces: (function* () {
      yield open;
      yield* base64Pieces(parts);
      yield '"}';
    })(),
  };
}

/** `head` with `[field]: [item, ...]` as its last field, each item written as it pieces. */
export function withList(head: Record<string, unknown>, field: string, items: readonly JsonPieces[]): JsonPieces {
  const open = `${jsonOpen(head, field)}[`;
  return {
    byteLength: items.reduce((n, it) => n + it.byteLength, Buffer.byteLength(open) + Math.max(0, items.length - 1) + 2),
    pieces: (function* () {
      yield open;
      for (const [i, it] of items.entries()) {
        if (i > 0) yield ',';
        yield* it.pieces;
      }
      yield ']}';
    })(),
  };
}

/** The JSON text of `head` with `[field]: items` as its last field, `LIST_BATCH` items at a time. */
export function* jsonWithList(head: Record<string, unknown>, field: string, items: readonly unknown[]): Generator<string> {
  yield `${jsonOpen(head, field)}[`;
  for (let i = 0; i < items.length; i += LIST_BATCH) {
    const text = JSON.stringify(items.slice(i, i + LIST_BATCH));
    yield (i > 0 ? ',' : '') + text.slice(1, -1);
  }
  yield ']}';
}

/**
 * Consecutive short pieces joined, so the socket sees few writes; after each piece the event loop
 * turns once (setImmediate), so other requests' callbacks run between the pieces of a fast reader.
 */
async function* coalesced(pieces: Iterable<string>): AsyncGenerator<string> {
  let pending = '';
  for (const p of pieces) {
    if (pending.length > 0 && pending.length + p.length > COALESCE_CHARS) {
      yield pending;
      pending = '';
      await new Promise((resolve) => setImmediate(resolve));
    }
    pending += p;
  }
  if (pending.length > 0) yield pending;
}

/**
 * Answer JSON written from its pieces as the client reads them (backpressure: the next piece is made
 * when the socket has room). A known byteLength becomes Content-Length; bare pieces are sent
 * chunked. A client that goes away stops the pieces (the generator is closed).
 */
export function sendJsonPieces(ctx: Context, json: JsonPieces | Iterable<string>): void {
  const known = 'pieces' in json;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = Readable.from(coalesced(known ? json.pieces : json), { objectMode: false, highWaterMark: 1 });
  if (known) ctx.length = json.byteLength;
}
