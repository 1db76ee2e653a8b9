// Identifier rules of CONTRACT.md section 1 for storage requests: each returns the value or throws a
// 400 invalid_request that names the field.
import { badRequest } from '../http/errors.js';
import { MAX_KEY_BYTES } from '../limits/input.js';

export const NAMESPACE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE_RE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function validateNamespace(v: unknown, field = 'namespace'): string {
  if (v === undefined || v === null) return 'default';
  if (typeof v !== 'string' || !NAMESPACE_RE.test(v)) {
    throw badRequest(`${field} must match ${NAMESPACE_RE.source}`);
  }
  return v;
}

const PRINTABLE_ASCII_RE = /^[\u0020-\u007e]+$/;

/** A key: 1..1024 bytes of UTF-8 (well-formed), no control characters. */
export function validateKey(v: unknown, field = 'key'): string {
  if (typeof v !== 'string') throw badRequest(`${field} is required and must be a string`);
  if (v.length === 0) throw badRequest(`${field} must not be empty`);
  // The usual key, printable ASCII: one byte a character, no surrogates, no control characters.
  if (v.length <= MAX_KEY_BYTES && PRINTABLE_ASCII_RE.test(v)) return v;
  if (LONE_SURROGATE_RE.test(v)) throw badRequest(`${field} must be valid UTF-8 (it holds a lone surrogate)`);
  const bytes = Buffer.byteLength(v, 'utf8');
  if (bytes > MAX_KEY_BYTES) throw badRequest(`${field} is ${bytes} bytes of UTF-8; at most ${MAX_KEY_BYTES} are allowed`);
  if (CONTROL_RE.test(v)) throw badRequest(`${field} must not contain control characters (U+0000-U+001F, U+007F)`);
  return v;
}

/** A key prefix for list: like a key but may be empty. */
export function validatePrefix(v: unknown): string {
  if (v === undefined || v === '') return '';
  return validateKey(v, 'prefix');
}

/** Decode one percent-encoded path segment exactly once (400 when the encoding is malformed). */
export function decodePathSegment(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`${field} is not validly percent-encoded UTF-8`);
  }
}
