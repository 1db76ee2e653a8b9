// The query routes of CONTRACT.md section 6, each behind the gate's tenantGate (authenticate, rate
// limit); the handlers validate the whole body (400/413/415), call gate.authorize (ACL 403, quota
// 402), then ask the query service. Similarity and both top-Ks are engine requests (429
// too_many_in_flight past the tenant's limit), their engine work run in the request's turn.
import type { Context } from 'koa';
import type { Api } from '../../http/endpoint.js';
import { QUERY_ENDPOINTS as EP, searchBody, similarityBody, topkBody, topkVectorBody } from './endpoints.js';
import { badRequest, payloadTooLarge } from '../../http/errors.js';
import { parseBody } from '../../http/schema/validate.js';
import type { Base64Data } from '../../codec/base64.js';
import { decodePayload, payloadBytes, type Payload } from '../../codec/payload.js';
import { isNpy } from '../../codec/npy.js';
import { resolveTarget } from '../../entries/oracle.js';
import type { Config } from '../../config.js';
import type { Engine } from '../../engine/types.js';
import type { EntryService } from '../../entries/service.js';
import { gateOf } from '../../gate/context.js';
import { QueryService } from '../../query/service.js';
import type { RouteAdmission } from '../../http/admission.js';
import { jsonWithList, sendJsonPieces, STREAM_HELD_BYTES } from '../../http/json-stream.js';
import type { EntrySearch } from '../../store/entries.js';

export interface QueryDeps {
  entries: EntryService;
  search: EntrySearch;
  engine: Engine;
  config: Pick<Config, 'maxPayloadBytes' | 'coreCacheBytes'>;
  /** Engine requests in flight per tenant, engine turns, and the bytes requests hold. */
  admission: RouteAdmission;
}

/** Wires the four query routes; returns the service (its cache statistics are worth watching). */
export function registerQueryRoutes(api: Api, deps: QueryDeps): QueryService {
  const query = new QueryService({
    entries: deps.entries,
    search: deps.search,
    engine: deps.engine,
    coreCacheBytes: deps.config.coreCacheBytes,
    admission: deps.admission.engine,
  });

  api.mount(EP.similarity, async function similarity(ctx: Context): Promise<void> {
    const { tenant, gate: g } = gateOf(ctx);
    const r = parseBody(similarityBody, ctx.request.body);
    await g.authorize(r.namespace, 'similarity');
    const score = await query.similarity(tenant.tenantId, r.namespace, r.key_a, r.key_b, r.metric, deps.admission.of(ctx).turn);
    ctx.body = { key_a: r.key_a, key_b: r.key_b, namespace: r.namespace, metric: r.metric, score };
  });

  api.mount(EP.topk, async function topk(ctx: Context): Promise<void> {
    const { tenant, gate: g } = gateOf(ctx);
    const r = parseBody(topkBody, ctx.request.body);
    await g.authorize(r.namespace, 'topk');
    const found = await query.topk(tenant.tenantId, r.namespace, r.query_key, r.k, r.metric, r.filters ?? {}, deps.admission.of(ctx).turn);
    ctx.body = { query_key: r.query_key, metric: r.metric, n_candidates: found.n_candidates, results: found.results };
  });

  // Top-K by vector decomposes its array as a put does, in the same turns.
  api.mount(EP.topk_vector, async function topkVector(ctx: Context): Promise<void> {
    const { tenant, gate: g } = gateOf(ctx);
    const admission = deps.admission.of(ctx);
    const r = parseBody(topkVectorBody, ctx.request.body);
    // The relative error target of the vector's decomposition: `tolerance`, else the domain's.
    const { tolerance } = resolveTarget(r.domain, r.tolerance, undefined);
    const payload = await vectorPayload(r.data_b64, deps.config.maxPayloadBytes);
    await g.authorize(r.namespace, 'topk_vector');
    const found = await query.topkVector(tenant.tenantId, r.namespace, payload, tolerance, r.k, r.metric, r.filters ?? {}, admission.turn);
    ctx.body = { query_key: '', metric: r.metric, n_candidates: found.n_candidates, results: found.results };
  });

  api.mount(EP.search, async function search(ctx: Context): Promise<void> {
    const { tenant, gate: g } = gateOf(ctx);
    const r = parseBody(searchBody, ctx.request.body);
    await g.authorize(r.namespace, 'search');
    // Up to 10000 results of up to 64 KiB metadata each: written as the client reads, never one
    // string; what the stream holds is reserved before the query runs.
    const { hold, turn } = deps.admission.of(ctx);
    await hold.grow(STREAM_HELD_BYTES, turn.signal);
    const { results, total } = await query.search(tenant.tenantId, r.namespace, r.filters, r.limit, r.offset);
    sendJsonPieces(ctx, jsonWithList({ namespace: r.namespace, count: results.length, total }, 'results', results));
  });

  return query;
}

/**
 * The array of a topk_vector (an .npy, CONTRACT.md section 2): 413 over the payload limit, 400 for
 * bytes that are not an .npy (a blob has no shape to compare by).
 */
export async function vectorPayload(dataB64: Base64Data, maxPayloadBytes: number): Promise<Payload> {
  const bytes = payloadBytes(dataB64, maxPayloadBytes);
  if (!isNpy(bytes))
    throw badRequest('data_b64 must be an .npy array (it does not start with the \\x93NUMPY magic)', { field: 'data_b64' });
  const payload = await decodePayload(bytes, maxPayloadBytes);
  if (payload.data.length > maxPayloadBytes) {
    throw payloadTooLarge(`decoded payload data of ${payload.data.length} bytes exceeds the limit of ${maxPayloadBytes} bytes`);
  }
  return payload;
}
