// POST /v1/put (JSON and binary forms), /v1/put_cores, /v1/put_cores_batch. Each handler validates
// the whole request (400/413/415), then asks the gate (ACL 403, quota 402), then does the work:
// CONTRACT.md section 4's order of checks.
import type { Context, Middleware } from 'koa';
import { payloadTooLarge } from '../../http/errors.js';
import { decodePayload, payloadBytes, type Payload } from '../../codec/payload.js';
import { NpyGather, type Widen } from '../../codec/npy-gather.js';
import { gateOf } from '../../gate/context.js';
import { putView } from '../../entries/entry.js';
import { validateNamespace } from '../../entries/identifiers.js';
import { metadataFromHeader } from '../../entries/metadata.js';
import { resolveTarget } from '../../entries/oracle.js';
import { putBody, putCoresBody, putCoresEntry, putQuery } from './endpoints.js';
import { parseBody, parseParams, validate } from '../../http/schema/validate.js';
import type { Infer } from '../../http/schema/types.js';
import { parseCoresBatch, parseCoresEntry } from '../../entries/cores-input.js';
import { NPY_MAX_HEADER_BYTES } from '../../limits/input.js';
import { bodyObject, readRawBody } from '../../http/body.js';
import type { StorageDeps } from './routes.js';

const NPY_TYPE = 'application/x-npy';
const BLOB_TYPE = 'application/octet-stream';

/** The array-data limit (original_bytes) of CONTRACT.md section 2; the .npy header does not count. */
function checkDataSize(payload: Payload, max: number): void {
  if (payload.data.length > max) {
    throw payloadTooLarge(`decoded payload data of ${payload.data.length} bytes exceeds the limit of ${max} bytes`);
  }
}

export function putHandler(deps: StorageDeps): Middleware {
  const max = deps.config.maxPayloadBytes;
  const widen: Widen = (src, dtype, dst, offset, lanes) => deps.engine.widen(src, dtype, dst, offset, lanes);
  return async function put(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const admission = deps.admission.of(ctx);
    const type = ctx.is(NPY_TYPE, BLOB_TYPE);
    let namespace: string;
    let key: string;
    let metadata: Record<string, unknown>;
    let target;
    let payload: Payload;
    let pooled: Buffer | null = null; // the binary body, given back once the put is done with it
    let gather: NpyGather | null = null; // its floats as float64, given back with it
    if (typeof type === 'string') {
      // Binary form: parameters in the query string, metadata in a header, the payload as the body.
      const q = parseParams(putQuery, ctx.query, ['key']);
      ({ key, namespace } = q);
      target = resolveTarget(q.domain, q.tolerance, q.max_rank);
      metadata = metadataFromHeader(ctx.get('X-Ttstore-Metadata') || undefined);
      const blob = type === BLOB_TYPE;
      const limit = blob ? max : max + NPY_MAX_HEADER_BYTES;
      // An .npy upload of floats is converted for the engine while it arrives (codec/npy-gather.ts), and
      // one whose header is refused is answered as soon as the header is in.
      const length = Number(ctx.get('Content-Length'));
      await deps.admission.holdBody(ctx, limit);
      if (!blob && Number.isSafeInteger(length) && length > 0 && length <= limit) {
        gather = new NpyGather({
          pool: deps.buffers,
          widen,
          budget: admission.hold,
          total: length,
          maxElements: max,
          minBytes: deps.config.compressionThresholdBytes,
        });
      }
      try {
        pooled = await readRawBody(ctx, limit, deps.buffers, gather ?? undefined, admission);
        payload = await decodePayload(pooled, max, blob);
        const gathered = await gather?.finish();
        if (gathered) payload.gathered = gathered;
      } catch (err) {
        await gather?.release(); // its conversions read the body: settled before the body goes back
        if (pooled) deps.buffers.release(pooled);
        throw err;
      }
    } else {
      // The JSON form, read by the route's body reader (data_b64 decoded as it arrived).
      const body = parseBody(putBody, ctx.request.body);
      ({ key, namespace } = body);
      target = resolveTarget(body.domain, body.tolerance, body.max_rank);
      metadata = body.metadata ?? {};
      payload = await decodePayload(payloadBytes(body.data_b64, max), max);
    }
    try {
      checkDataSize(payload, max);
      await gate.authorize(namespace, 'put');
      // Every use of the payload's bytes (engine, blob write) is awaited inside put().
      const row = await deps.entries.put({ tenantId: tenant.tenantId, namespace, key, payload, metadata, target, turn: admission.turn });
      ctx.body = putView(row);
    } finally {
      await gather?.release();
      if (pooled) deps.buffers.release(pooled);
    }
  };
}

export function putCoresHandler(deps: StorageDeps): Middleware {
  return async function putCores(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const { namespace, ...fields } = parseBody(putCoresBody, ctx.request.body);
    const entry = await parseCoresEntry(fields, deps.engine, deps.config);
    await gate.authorize(namespace, 'put_cores');
    const [row] = await deps.entries.putCores(tenant.tenantId, namespace, [entry]);
    ctx.body = putView(row!);
  };
}

export function putCoresBatchHandler(deps: StorageDeps): Middleware {
  return async function putCoresBatch(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const body = bodyObject(ctx);
    const namespace = validateNamespace(body.namespace);
    const fields = (e: unknown) => validate(putCoresEntry, e, '', true) as Infer<typeof putCoresEntry>;
    const entries = await parseCoresBatch(body.entries, namespace, fields, deps.engine, deps.config);
    await gate.authorize(namespace, 'put_cores_batch');
    const rows = await deps.entries.putCores(tenant.tenantId, namespace, entries);
    ctx.body = { namespace, count: rows.length, results: rows.map(putView) };
  };
}
