// Entry metadata: an arbitrary JSON object, kept as given and indexed by its top-level names.
import { badRequest } from '../errors.js';

export const MAX_METADATA_BYTES = 1024 * 1024;

/** The metadata object of a put (absent: {}); 400 for anything but an object or one over 1 MiB. */
export function validateMetadata(v: unknown, field = 'metadata'): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badRequest(`${field} must be a JSON object`);
  const bytes = Buffer.byteLength(JSON.stringify(v), 'utf8');
  if (bytes > MAX_METADATA_BYTES) throw badRequest(`${field} is ${bytes} bytes of JSON; at most ${MAX_METADATA_BYTES} are allowed`);
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
