// Validation of the query request bodies (SPEC.md "Query endpoints", CONTRACT.md section 6), from
// the schemas of src/api/query.ts: each function returns trusted, typed values or throws 400
// invalid_request (413 for an oversized vector) naming the field.
import { badRequest, payloadTooLarge } from '../../http/errors.js';
import type { Base64Data } from '../../codec/base64.js';
import { decodePayload, payloadBytes, type Payload } from '../../codec/payload.js';
import type { Metric } from '../../engine/types.js';
import { resolveTarget } from '../../entries/oracle.js';
import type { Filters } from '../../query/filters.js';
import { parseBody } from '../../http/schema/validate.js';
import { searchBody, similarityBody, topkBody, topkVectorBody } from './endpoints.js';
import { isNpy } from '../../codec/npy.js';

export { MAX_FILTERS, SEARCH_MAX_LIMIT, TOPK_DEFAULT_K, TOPK_MAX_K } from './endpoints.js';

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
  /** Decoded as the body arrived; vectorPayload checks it. */
  data_b64: Base64Data;
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
  limit: number;
  offset: number;
}

/** POST /v1/query/similarity */
export function similarityRequest(raw: unknown): SimilarityRequest {
  return parseBody<SimilarityRequest>(similarityBody, raw);
}

/** POST /v1/query/topk */
export function topkRequest(raw: unknown): TopkRequest {
  const r = parseBody<TopkRequest>(topkBody, raw);
  return { ...r, filters: r.filters ?? {} };
}

/** POST /v1/query/topk_vector (the vector itself: vectorPayload). */
export function topkVectorRequest(raw: unknown): TopkVectorRequest {
  const b = parseBody<Omit<TopkVectorRequest, 'tolerance'> & { domain?: string; tolerance?: number }>(topkVectorBody, raw);
  return {
    data_b64: b.data_b64, namespace: b.namespace, k: b.k, metric: b.metric, filters: b.filters ?? {},
    tolerance: resolveTarget(b.domain, b.tolerance, undefined).tolerance,
  };
}

/** POST /v1/query/search */
export function searchRequest(raw: unknown): SearchRequest {
  return parseBody<SearchRequest>(searchBody, raw);
}

/**
 * The array of a topk_vector (an .npy, CONTRACT.md section 2): 413 over the payload limit, 400 for
 * bytes that are not an .npy (a blob has no shape to compare by).
 */
export async function vectorPayload(dataB64: Base64Data, maxPayloadBytes: number): Promise<Payload> {
  const bytes = payloadBytes(dataB64, maxPayloadBytes);
  if (!isNpy(bytes)) throw badRequest('data_b64 must be an .npy array (it does not start with the \\x93NUMPY magic)', { field: 'data_b64' });
  const payload = await decodePayload(bytes, maxPayloadBytes);
  if (payload.data.length > maxPayloadBytes) {
    throw payloadTooLarge(`decoded payload data of ${payload.data.length} bytes exceeds the limit of ${maxPayloadBytes} bytes`);
  }
  return payload;
}
