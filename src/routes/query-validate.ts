// Validation of the query request bodies (SPEC.md "Query endpoints", CONTRACT.md section 6): one
// function per body, each returning trusted, typed values or throwing 400 invalid_request (413 for
// an oversized vector) naming the field. Unknown fields are refused, so a misspelt `metric` cannot
// silently fall back to the default.
import { badRequest, payloadTooLarge } from '../errors.js';
import { base64DecodedLength, decodeBase64Strict } from '../codec/base64.js';
import { decodePayload, type Payload } from '../codec/payload.js';
import { METRICS, type Metric } from '../engine/types.js';
import { validateKey, validateNamespace } from '../entries/identifiers.js';
import { resolveTarget } from '../entries/oracle.js';
import type { Filters } from '../query/filters.js';
import { NPY_HEADER_ALLOWANCE } from './storage-body.js';
import { objectBody } from './admin-validate.js';

export const TOPK_DEFAULT_K = 10;
export const TOPK_MAX_K = 1000;
/** Filters of one request; each costs one index probe per candidate. */
export const MAX_FILTERS = 64;

export interface SimilarityRequest {
  key_a: string;
  key_b: string;
  namespace: string;
  metric: Metric;
}

export interface TopkRequest {
  query_key: string;
  namespace: string;
  k: number;
  metric: Metric;
  filters: Filters;
}

export interface TopkVectorRequest {
  /** Still base64; vectorPayload decodes it. */
  data_b64: string;
  namespace: string;
  k: number;
  metric: Metric;
  filters: Filters;
  /** Relative error target for decomposing the vector (from `tolerance`, else `domain`). */
  tolerance: number;
}

export interface SearchRequest {
  namespace: string;
  filters: Filters;
}

function metricOf(v: unknown): Metric {
  if (v === undefined || v === null) return 'cosine';
  if (typeof v !== 'string' || !(METRICS as readonly string[]).includes(v)) {
    throw badRequest(`metric must be one of ${METRICS.join(', ')}`, { field: 'metric' });
  }
  return v as Metric;
}

function kOf(v: unknown): number {
  if (v === undefined || v === null) return TOPK_DEFAULT_K;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > TOPK_MAX_K) {
    throw badRequest(`k must be an integer in [1, ${TOPK_MAX_K}]`, { field: 'k' });
  }
  return v;
}

function filtersOf(v: unknown, required: boolean): Filters {
  if (v === undefined || v === null) {
    if (required) throw badRequest('filters is required (an object of metadata keys and values; {} matches every entry)', { field: 'filters' });
    return {};
  }
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw badRequest('filters must be an object of top-level metadata keys and the JSON values they must equal', { field: 'filters' });
  }
  const n = Object.keys(v).length;
  if (n > MAX_FILTERS) throw badRequest(`filters has ${n} keys; at most ${MAX_FILTERS} are allowed`, { field: 'filters' });
  return v as Filters;
}

/** POST /v1/query/similarity */
export function similarityRequest(raw: unknown): SimilarityRequest {
  const b = objectBody(raw, ['key_a', 'key_b', 'namespace', 'metric']);
  return {
    key_a: validateKey(b.key_a, 'key_a'),
    key_b: validateKey(b.key_b, 'key_b'),
    namespace: validateNamespace(b.namespace),
    metric: metricOf(b.metric),
  };
}

/** POST /v1/query/topk */
export function topkRequest(raw: unknown): TopkRequest {
  const b = objectBody(raw, ['query_key', 'namespace', 'k', 'metric', 'filters']);
  return {
    query_key: validateKey(b.query_key, 'query_key'),
    namespace: validateNamespace(b.namespace),
    k: kOf(b.k),
    metric: metricOf(b.metric),
    filters: filtersOf(b.filters, false),
  };
}

/** POST /v1/query/topk_vector (the vector itself: vectorPayload). */
export function topkVectorRequest(raw: unknown): TopkVectorRequest {
  const b = objectBody(raw, ['data_b64', 'namespace', 'k', 'metric', 'filters', 'domain', 'tolerance']);
  if (typeof b.data_b64 !== 'string') throw badRequest('data_b64 is required and must be a base64 string', { field: 'data_b64' });
  return {
    data_b64: b.data_b64,
    namespace: validateNamespace(b.namespace),
    k: kOf(b.k),
    metric: metricOf(b.metric),
    filters: filtersOf(b.filters, false),
    tolerance: resolveTarget(b.domain, b.tolerance, undefined).tolerance,
  };
}

/** POST /v1/query/search */
export function searchRequest(raw: unknown): SearchRequest {
  const b = objectBody(raw, ['namespace', 'filters']);
  return { namespace: validateNamespace(b.namespace), filters: filtersOf(b.filters, true) };
}

/** The array of a topk_vector (CONTRACT.md section 2, as put takes it); 413 over the payload limit. */
export async function vectorPayload(dataB64: string, maxPayloadBytes: number): Promise<Payload> {
  const implied = base64DecodedLength(dataB64);
  if (implied > maxPayloadBytes + NPY_HEADER_ALLOWANCE) {
    throw payloadTooLarge(`decoded payload of ${implied} bytes exceeds the limit of ${maxPayloadBytes} bytes`);
  }
  const payload = await decodePayload(decodeBase64Strict(dataB64, 'data_b64'));
  if (payload.data.length > maxPayloadBytes) {
    throw payloadTooLarge(`decoded payload data of ${payload.data.length} bytes exceeds the limit of ${maxPayloadBytes} bytes`);
  }
  return payload;
}
