// POST /v1/put (JSON and binary forms), /v1/put_cores, /v1/put_cores_batch. Each handler validates
// the whole request (400/413/415), then asks the gate (ACL 403, quota 402), then does the work:
// CONTRACT.md section 4's order of checks.
import type { Context, Middleware } from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import { decodeBase64Strict, base64DecodedLength } from '../codec/base64.js';
import { decodePayload, type Payload } from '../codec/payload.js';
import type { GateState } from '../gate/context.js';
import { putView } from '../entries/entry.js';
import { queryValue, validateKey, validateNamespace } from '../entries/identifiers.js';
import { metadataFromHeader, validateMetadata } from '../entries/metadata.js';
import { resolveTarget } from '../entries/oracle.js';
import { parseCoresBatch, parseCoresEntry } from '../entries/cores-input.js';
import { bodyObject, jsonParser, NPY_HEADER_ALLOWANCE, readJson, readRawBody } from './storage-body.js';
import type { StorageDeps } from './storage.js';

const NPY_TYPE = 'application/x-npy';
const BLOB_TYPE = 'application/octet-stream';

function gateOf(ctx: Context): GateState {
  return ctx.state as GateState;
}

/** The array-data limit (original_bytes) of CONTRACT.md section 2; the .npy header does not count. */
function checkDataSize(payload: Payload, max: number): void {
  if (payload.data.length > max) {
    throw payloadTooLarge(`decoded payload data of ${payload.data.length} bytes exceeds the limit of ${max} bytes`);
  }
}

/** Query-string number (the binary form's tolerance); 400 when not a plain decimal number. */
function queryNumber(ctx: Context, name: string): number | undefined {
  const raw = queryValue(ctx.query, name);
  if (raw === undefined) return undefined;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) throw badRequest(`${name} must be a number`);
  return Number(raw);
}

function queryInteger(ctx: Context, name: string): number | undefined {
  const raw = queryValue(ctx.query, name);
  if (raw === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(raw)) throw badRequest(`${name} must be an integer`);
  return Number(raw);
}

export function putHandler(deps: StorageDeps): Middleware {
  const parse = jsonParser(deps.jsonLimit);
  const max = deps.config.maxPayloadBytes;
  return async function put(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const type = ctx.is(NPY_TYPE, BLOB_TYPE);
    let namespace: string;
    let key: string;
    let metadata: Record<string, unknown>;
    let target;
    let payload: Payload;
    if (typeof type === 'string') {
      // Binary form: parameters in the query string, metadata in a header, the payload as the body.
      key = validateKey(queryValue(ctx.query, 'key'));
      namespace = validateNamespace(queryValue(ctx.query, 'namespace'));
      target = resolveTarget(queryValue(ctx.query, 'domain'), queryNumber(ctx, 'tolerance'), queryInteger(ctx, 'max_rank'));
      metadata = metadataFromHeader(ctx.get('X-Ttstore-Metadata') || undefined);
      const blob = type === BLOB_TYPE;
      const bytes = await readRawBody(ctx, blob ? max : max + NPY_HEADER_ALLOWANCE);
      payload = await decodePayload(bytes, blob);
    } else {
      if (ctx.is('application/json', '+json') === false) {
        throw unsupportedMediaType(`POST /v1/put takes application/json, ${NPY_TYPE} or ${BLOB_TYPE}, got ${ctx.get('Content-Type')}`);
      }
      await readJson(ctx, parse);
      const body = bodyObject(ctx);
      key = validateKey(body.key);
      namespace = validateNamespace(body.namespace);
      target = resolveTarget(body.domain, body.tolerance, body.max_rank);
      metadata = validateMetadata(body.metadata);
      if (typeof body.data_b64 !== 'string') throw badRequest('data_b64 is required and must be a base64 string');
      const implied = base64DecodedLength(body.data_b64);
      if (implied > max + NPY_HEADER_ALLOWANCE) throw payloadTooLarge(`decoded payload of ${implied} bytes exceeds the limit of ${max} bytes`);
      const bytes = decodeBase64Strict(body.data_b64, 'data_b64');
      body.data_b64 = undefined; // let the string go before the engine works
      payload = await decodePayload(bytes);
    }
    checkDataSize(payload, max);
    await gate.authorize(namespace, 'put');
    const row = await deps.entries.put({ tenantId: tenant.tenantId, namespace, key, payload, metadata, target });
    ctx.body = putView(row);
  };
}

export function putCoresHandler(deps: StorageDeps): Middleware {
  const parse = jsonParser(deps.jsonLimit);
  return async function putCores(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    await readJson(ctx, parse);
    const body = bodyObject(ctx);
    const namespace = validateNamespace(body.namespace);
    const entry = await parseCoresEntry(body, deps.engine, deps.config);
    await gate.authorize(namespace, 'put_cores');
    const [row] = await deps.entries.putCores(tenant.tenantId, namespace, [entry]);
    ctx.body = putView(row!);
  };
}

export function putCoresBatchHandler(deps: StorageDeps): Middleware {
  const parse = jsonParser(deps.jsonLimit);
  return async function putCoresBatch(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    await readJson(ctx, parse);
    const body = bodyObject(ctx);
    const namespace = validateNamespace(body.namespace);
    const entries = await parseCoresBatch(body.entries, namespace, deps.engine, deps.config);
    await gate.authorize(namespace, 'put_cores_batch');
    const rows = await deps.entries.putCores(tenant.tenantId, namespace, entries);
    ctx.body = { namespace, count: rows.length, results: rows.map(putView) };
  };
}
