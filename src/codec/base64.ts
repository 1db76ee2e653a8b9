// Strict standard base64 (RFC 4648, padding optional) without a JavaScript pass over the characters:
// Node's decoder (native) skips characters outside the alphabet and stops at '=', so a string is valid
// exactly when its decoded length equals the length its character count implies (and it has none of
// the URL-safe '-' and '_', which Node also takes).
import { badRequest } from '../http/errors.js';

/** Decoded length implied by `chars` characters whose last `pads` (at most 2) are '=', or -1 when no valid string has it. */
function impliedLength(chars: number, pads: number): number {
  if (pads > 0 && chars % 4 !== 0) return -1;
  const len = chars - pads;
  if (len % 4 === 1) return -1;
  return Math.floor((len * 3) / 4);
}

/** Trailing '=' of `s` that count as padding (at most 2). */
function padsOf(s: string): number {
  let pad = 0;
  while (pad < 2 && pad < s.length && s.charCodeAt(s.length - 1 - pad) === 61 /* = */) pad++;
  return pad;
}

/** Decoded length implied by a base64 string of this many characters, or -1 when no string could have it. */
export function base64DecodedLength(s: string): number {
  return impliedLength(s.length, padsOf(s));
}

const hasUrlSafe = (s: string): boolean => s.indexOf('-') >= 0 || s.indexOf('_') >= 0;

const invalid = (field: string) => badRequest(`${field} is not valid base64`);

/** Decode `s`; 400 `invalid_request` naming `field` when it is not valid base64. */
export function decodeBase64Strict(s: string, field: string): Buffer {
  const expected = base64DecodedLength(s);
  if (expected < 0) throw invalid(field);
  const out = Buffer.from(s, 'base64');
  if (out.length !== expected || hasUrlSafe(s)) throw invalid(field);
  return out;
}

/**
 * The bytes of a base64 string that was decoded as it arrived (a data_b64 member of a JSON body,
 * codec/json-reader.ts), with the verdict decodeBase64Strict would give the whole string. The
 * string itself was never held. The bytes are not an enumerable property, so a walk over a parsed
 * body (measureJson, a message's excerpt) never visits them.
 */
export class Base64Data {
  readonly #bytes: Buffer;

  constructor(
    bytes: Buffer,
    /** What base64DecodedLength says of the string: its decoded length, or -1 when no valid string has its length. */
    readonly impliedLength: number,
    /** False when the string is not strict standard base64. */
    readonly valid: boolean,
  ) {
    this.#bytes = bytes;
  }

  /** The decoded bytes; 400 naming `field` when the string was not valid base64. */
  bytes(field: string): Buffer {
    if (!this.valid) throw invalid(field);
    return this.#bytes;
  }

  toJSON(): string {
    return `(${this.#bytes.length} bytes of base64 data)`;
  }
}

/** Characters held before they are decoded (a multiple of 4 is decoded; at least 1 is kept for the end). */
const DECODE_BYTES = 16 * 1024;

/**
 * Decodes one base64 string given in pieces into `out` from `start`, as decodeBase64Strict would the
 * whole string: the pieces are decoded in whole groups of four, the last one to four characters are
 * kept until finish() (padding is only allowed there). Each piece names the raw bytes it came from
 * in the body, so that when the string turns out not to be base64 the reader can tell which of its
 * bytes were never checked (a control character there makes the JSON malformed, not the base64).
 */
export class Base64Decoder {
  /** Characters not decoded yet, and the raw offset where the first of them began (-1: none). */
  private pending = '';
  private pendingRaw = -1;
  /** Offset just past the last raw piece, and its length when its characters were its bytes (no escape). */
  private lastRawEnd = -1;
  private lastRawChars = 0;
  private written = 0;
  private chars = 0;
  /** The last two characters (the padding the implied length strips). */
  private tail = '';
  private ok = true;

  constructor(
    private readonly out: Buffer,
    private readonly start: number,
  ) {}

  /** The raw offset from which the body's bytes are still needed (-1: none). */
  get keepFrom(): number {
    return this.pendingRaw;
  }

  /** True while every character so far could be part of valid base64. */
  get valid(): boolean {
    return this.ok;
  }

  /**
   * Characters of the string, from raw bytes `raw`..`rawEnd` of the body (`text.length` of them
   * when the characters are the bytes; an escape's one character stands for 2 or 6). Returns -1, or
   * at the first character found outside the alphabet, the raw offset from which the bytes were not
   * yet proven to be base64 characters.
   */
  push(text: string, raw: number, rawEnd: number): number {
    this.chars += text.length;
    this.tail = text.length >= 2 ? text.slice(-2) : (this.tail + text).slice(-2);
    if (!this.ok) return -1;
    if (this.pending.length === 0) this.pendingRaw = raw;
    this.pending += text;
    this.lastRawEnd = rawEnd;
    this.lastRawChars = rawEnd - raw === text.length ? text.length : 0;
    if (rawEnd - this.pendingRaw < DECODE_BYTES) return -1;
    const from = this.pendingRaw;
    return this.decode(false) ? -1 : from;
  }

  /** The string ended: its bytes and verdict; `failedFrom` as push's when this is the first failure. */
  finish(): { data: Base64Data; failedFrom: number } {
    const from = this.pendingRaw;
    const failedFrom = this.ok && !this.decode(true) ? from : -1;
    const implied = impliedLength(this.chars, padsOf(this.tail));
    const data = new Base64Data(this.out.subarray(this.start, this.start + this.written), implied, this.ok);
    return { data, failedFrom };
  }

  /** Bytes written so far (the end of the string's bytes in `out`). */
  get length(): number {
    return this.written;
  }

  /** Decode the pending characters but the last one to four (all of them when `final`). */
  private decode(final: boolean): boolean {
    const s = this.pending;
    const n = final ? s.length : Math.floor((s.length - 1) / 4) * 4;
    if (n === 0 && !final) return true;
    const part = n === s.length ? s : s.slice(0, n);
    const expected = final ? impliedLength(n, padsOf(part)) : (n / 4) * 3;
    const at = this.start + this.written;
    if (expected < 0 || hasUrlSafe(part) || this.out.write(part, at, 'base64') !== expected) {
      this.ok = false;
      this.pending = '';
      this.pendingRaw = -1;
      return false;
    }
    this.written += expected;
    const kept = s.length - n;
    this.pending = kept === 0 ? '' : s.slice(n);
    // The kept characters came from the last raw piece when it was long enough; else from earlier.
    if (kept === 0) this.pendingRaw = -1;
    else if (kept <= this.lastRawChars) this.pendingRaw = this.lastRawEnd - kept;
    return true;
  }
}
