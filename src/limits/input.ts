// The bounds on what a request may carry (CONTRACT.md section 8, "Request bodies"), each written once:
// the checks, the endpoint descriptions (and so the OpenAPI document) and the tests read them here.
// Every bound is checked before the work it bounds, so a hostile input costs at most its own bytes.

export const KiB = 1024;
export const MiB = 1024 * KiB;

/**
 * A JSON body without array data (serve, the queries but topk_vector, simulation submit, admin); and
 * the part of one that carries data_b64 beyond its entries' metadata that is not the plain characters
 * of strings (syntax, numbers, escapes), so that such a body parses about as fast as its size says.
 */
export const JSON_BODY_BYTES = 1 * MiB;

/** An .npy header (magic to padding); NumPy's own readers refuse more than 10,000 bytes by default. */
export const NPY_MAX_HEADER_BYTES = 64 * KiB;

/** Largest dimension of an .npy shape (the product is bounded by SVC_GATE_MAX_PAYLOAD_BYTES elements). */
export const NPY_MAX_DIM = 2 ** 40;

/** An entry's metadata as compact JSON (JSON.stringify), UTF-8 bytes. */
export const METADATA_MAX_BYTES = 64 * KiB;

/** Top-level names of an entry's metadata (each becomes a row of the metadata index). */
export const METADATA_MAX_KEYS = 256;

/** Entries of one put_cores_batch. */
export const MAX_BATCH_ENTRIES = 1000;

/** Cores of one train in put_cores (the responses' n_cores bound). */
export const MAX_CORES = 4096;

/** Levels of objects and arrays in metadata and filters; the top-level object is level 1. */
export const JSON_MAX_DEPTH = 32;

/**
 * Levels of objects and arrays anywhere in a JSON body: metadata at its deepest, in a
 * put_cores_batch body (body, entries, entry), sits three levels down.
 */
export const BODY_MAX_DEPTH = JSON_MAX_DEPTH + 3;

/**
 * A body the server answers without reading (401, 413, 415) is dropped as it arrives when it was
 * declared at most this long; a longer one, or a chunked one, closes the connection after the answer.
 */
export const UNREAD_BODY_DRAIN_BYTES = 16 * MiB;

/**
 * How long a connection closed with its body unread keeps reading (and dropping) what the client still
 * sends after the answer, so that a client writing its body before it reads gets the answer, not a reset.
 */
export const UNREAD_BODY_LINGER_MS = 1000;

/** All the header lines of a request together (Node's maxHeaderSize); more: 431. */
export const MAX_HEADER_BYTES = 16 * KiB;

/** Dimensions of an array (an .npy shape, a put_cores shape, a region or a point). */
export const MAX_DIMS = 8;

/** An entry key in UTF-8 bytes (CONTRACT.md section 1). */
export const MAX_KEY_BYTES = 1024;

/**
 * Longest output_key_prefix of a simulation in bytes: room for "/<field>/step_<n>" so that every
 * output key stays a valid key.
 */
export const MAX_PREFIX_BYTES = MAX_KEY_BYTES - 64;

/**
 * Counts and page sizes of request fields, the most and the default: k of a top-K; filters of one
 * request (each costs one index probe per candidate); matches of one search (`offset` pages through
 * the rest); keys of a list page; jobs of a simulation list page.
 */
export const TOPK_MAX_K = 1000;
export const TOPK_DEFAULT_K = 10;
export const MAX_FILTERS = 64;
export const SEARCH_MAX_LIMIT = 10000;
export const LIST_MAX_LIMIT = 10000;
export const LIST_DEFAULT_LIMIT = 1000;
export const JOB_LIST_MAX_LIMIT = 1000;
export const JOB_LIST_DEFAULT_LIMIT = 50;

/** Bytes of base64 text that encode `bytes` bytes (with padding). */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/** The largest JSON body that carries data_b64: the largest payload (with an .npy header) in base64, plus the rest. */
export function payloadBodyBytes(maxPayloadBytes: number): number {
  return base64Length(maxPayloadBytes + NPY_MAX_HEADER_BYTES) + JSON_BODY_BYTES;
}

/** Which of the two JSON body limits a route takes (its endpoint description says). */
export type BodyLimit = 'small' | 'payload';

/** The byte limit of a JSON body of kind `limit`. */
export function jsonBodyBytes(limit: BodyLimit, maxPayloadBytes: number): number {
  return limit === 'small' ? JSON_BODY_BYTES : payloadBodyBytes(maxPayloadBytes);
}

/**
 * Bytes of a JSON body of kind `limit` that may be other than the plain characters of strings: all of
 * a small body; of a payload body, 1 MiB plus the largest metadata of a whole batch (every entry's
 * metadata may be made of short names and numbers).
 */
export function jsonStructureBytes(limit: BodyLimit): number {
  return limit === 'small' ? JSON_BODY_BYTES : JSON_BODY_BYTES + MAX_BATCH_ENTRIES * METADATA_MAX_BYTES;
}

/** The size of `bytes` in words, for messages and the API reference (1 MiB, 64 KiB, 1000 bytes). */
export function sizeText(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} bytes`;
}

/** A tenant's namespaces, and the largest custom rate limit and monthly quota an operator may set. */
export const MAX_NAMESPACES = 1000;
export const MAX_RATE_LIMIT_REQUESTS = 10_000_000;
export const MAX_RATE_LIMIT_WINDOW_S = 86_400;
export const MAX_MONTHLY_QUOTA = 1e15;
