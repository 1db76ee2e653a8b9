// Entry metadata: an arbitrary JSON object, kept as given and indexed by its top-level names.
import { measureJson } from '../codec/json.js';
import { badRequest } from '../http/errors.js';
import { JSON_MAX_DEPTH, METADATA_MAX_BYTES, METADATA_MAX_KEYS, sizeText } from '../limits/input.js';

/**
 * 400 naming `field` when `value` nests deeper than JSON_MAX_DEPTH levels of objects and arrays;
 * walked without recursion, so it runs before anything recursive does (metadata and filters).
 */
export function checkNesting(value: unknown, field: string): void {
  if (measureJson(value, JSON_MAX_DEPTH, Number.POSITIVE_INFINITY).depth > JSON_MAX_DEPTH) throw tooDeep(field);
}

const tooDeep = (field: string) => badRequest(`${field} nests deeper than ${JSON_MAX_DEPTH} levels of objects and arrays`, { field });

/**
 * The metadata object of a put (absent: {}); 400 for anything but an object, one with more than
 * METADATA_MAX_KEYS top-level names, nested deeper than JSON_MAX_DEPTH, or over METADATA_MAX_BYTES as
 * compact JSON. Each check runs before the work it bounds: the names are counted, the depth and a
 * lower bound of the size are walked without recursion, and only then is the text made.
 */
export function validateMetadata(v: unknown, field = 'metadata'): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${field} must be a JSON object`, { field });
  const names = Object.keys(v).length;
  if (names > METADATA_MAX_KEYS) {
    throw badRequest(`${field} has ${names} keys; at most ${METADATA_MAX_KEYS} are allowed`, { field });
  }
  const tooLarge = (what: string) =>
    badRequest(`${field} is ${what} bytes as compact JSON; at most ${sizeText(METADATA_MAX_BYTES)} are allowed`, { field });
  const m = measureJson(v, JSON_MAX_DEPTH, METADATA_MAX_BYTES);
  if (m.depth > JSON_MAX_DEPTH) throw tooDeep(field);
  if (m.bytesAtLeast > METADATA_MAX_BYTES) throw tooLarge('more than');
  const bytes = Buffer.byteLength(JSON.stringify(v), 'utf8');
  if (bytes > METADATA_MAX_BYTES) throw tooLarge(String(bytes));
  return v as Record<string, unknown>;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Metadata of the binary form: a JSON object in the X-Ttstore-Metadata header. ASCII JSON (non-ASCII
 * as \u escapes) is the portable form; raw UTF-8 bytes are accepted, and so are latin1 bytes (what
 * fetch sends for characters up to U+00FF) when they are not valid UTF-8.
 */
export function metadataFromHeader(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw === '') return {};
  // Node hands header values over as latin1, one character per byte: recover the bytes.
  const bytes = Buffer.from(raw, 'latin1');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = raw;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badRequest('X-Ttstore-Metadata must be a JSON object');
  }
  return validateMetadata(parsed, 'X-Ttstore-Metadata');
}
