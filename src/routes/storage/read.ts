// GET /v1/get/{namespace}/{key}, POST /v1/serve, DELETE /v1/delete/{namespace}/{key},
// GET /v1/list/{namespace}. Path segments are percent-encoded (a key `a/b` travels as `a%2Fb`) and are
// decoded here exactly once, from the raw path.
import { hash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { badRequest, payloadTooLarge, ProblemError } from '../../http/errors.js';
import { isPartial, toSelection } from '../../entries/selection.js';
import { encodeNpyHeader } from '../../codec/npy.js';
import { gateOf } from '../../gate/context.js';
import { getView, listItemView, shapeOf, ranksOf, fingerprintOf } from '../../entries/entry.js';
import type { EntryRow } from '../../store/entries.js';
import { decodePathSegment, validateKey, validateNamespace } from '../../entries/identifiers.js';
import { listQuery, serveBody, versionQuery } from './endpoints.js';
import { parseBody, parseParams } from '../../http/schema/validate.js';
import { base64Length, sendJsonPieces, streamHeldBytes, withBase64, withList } from '../../http/json-stream.js';
import type { StorageDeps } from './routes.js';
import { GpuPlacementError, type GpuPlacement } from '../../engine/gpu.js';
import type { EntryService } from '../../entries/service.js';

/** The raw (still percent-encoded) path segments after `prefix`, e.g. ['ns', 'a%2Fb']. */
function rawSegments(ctx: Context, prefix: string, count: number): string[] {
  const path = ctx.path;
  const rest = path.endsWith('/') ? path.slice(prefix.length, -1) : path.slice(prefix.length);
  const parts = rest.split('/');
  if (parts.length !== count) throw badRequest(`expected ${count} path segments after ${prefix}`);
  return parts;
}

function namespaceAndKey(ctx: Context, prefix: string): { namespace: string; key: string } {
  const [ns, key] = rawSegments(ctx, prefix, 2) as [string, string];
  return {
    namespace: validateNamespace(decodePathSegment(ns, 'namespace')),
    key: validateKey(decodePathSegment(key, 'key')),
  };
}

const etags = new WeakMap<EntryRow, string>();

/**
 * A strong validator, unique per (tenant, namespace, key, version) and stable for that version.
 * Memoised per row object (rows are immutable; the row cache shares them), like getView.
 */
export function etagOf(row: EntryRow): string {
  let etag = etags.get(row);
  if (etag === undefined) {
    const h = hash(
      'sha256',
      `${row.tenant_id}\u0000${row.namespace}\u0000${row.key}\u0000${row.version}\u0000${row.id}\u0000${row.created_at}`,
      'base64url',
    ).slice(0, 27);
    etag = `"${h}-v${row.version}"`;
    etags.set(row, etag);
  }
  return etag;
}

const getBodies = new WeakMap<EntryRow, string>();

/**
 * GET's JSON body, serialised once per row object (like getView and etagOf). A string, not a Buffer:
 * Node sends a string body in the same write as the response head (one buffer), a Buffer body as a
 * second chunk of a vectored write, which cost more per response than encoding ~300 bytes again.
 */
function getBody(row: EntryRow): string {
  let body = getBodies.get(row);
  if (body === undefined) {
    body = JSON.stringify(getView(row));
    getBodies.set(row, body);
  }
  return body;
}

function matchesIfNoneMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

const NO_PARAMS: { version?: number } = Object.freeze({});

export function getHandler(deps: StorageDeps): Middleware {
  return async function get(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const { namespace, key } = namespaceAndKey(ctx, '/v1/get/');
    // No query string, no parameters: Koa's ctx.query would parse '' into a fresh object per request.
    const { version } = ctx.querystring === '' ? NO_PARAMS : parseParams(versionQuery, ctx.query);
    await gate.authorize(namespace, 'get');
    const row = await deps.entries.require(tenant.tenantId, namespace, key, version);
    const etag = etagOf(row);
    // The hot path of a metadata read: headers straight to the response (ctx.set allocates per call).
    ctx.res.setHeader('ETag', etag);
    ctx.res.setHeader('Cache-Control', version !== undefined ? 'private, max-age=31536000, immutable' : 'private, no-cache');
    const inm = ctx.get('If-None-Match');
    if (inm && matchesIfNoneMatch(inm, etag)) {
      ctx.status = 304;
      return;
    }
    ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
    ctx.body = getBody(row);
  };
}

function headerSafe(v: string): string {
  return encodeURIComponent(v);
}

export function serveHandler(deps: StorageDeps): Middleware {
  return async function serve(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const { key, namespace, version, target, device = 'cuda:0', region, level, points } = parseBody(serveBody, ctx.request.body);
    const partial = isPartial({ region, level, points });
    const partialField = region !== undefined ? 'region' : level !== undefined ? 'level' : 'points';
    if (partial && target !== 'dense') throw badRequest('region, level and points apply to target dense', { field: partialField });
    await gate.authorize(namespace, target === 'dense' ? 'serve_dense' : target === 'gpu' ? 'serve_gpu' : 'serve_cores');
    const row = await deps.entries.require(tenant.tenantId, namespace, key, version);
    const { hold, turn } = deps.admission.of(ctx);

    if (target === 'gpu') {
      await hold.grow(row.stored_core_bytes, turn.signal); // the cores, read from their blob
      ctx.body = await serveGpu(deps, row, device);
      return;
    }

    if (target === 'cores') {
      if (!row.compressed) {
        throw new ProblemError(
          409,
          'not_compressed',
          `entry ${JSON.stringify(key)} version ${row.version} is stored uncompressed (passthrough) and has no cores`,
        );
      }
      await hold.grow(row.stored_core_bytes + streamHeldBytes(base64Length(row.stored_core_bytes)), turn.signal);
      const tt = await deps.entries.readCores(row);
      const coreDtype = row.core_dtype ?? 'float32';
      const cores = tt.cores.map((c, k) => {
        const shape = [tt.ranks[k]!, tt.modes[k]!, tt.ranks[k + 1]!];
        return withBase64({ shape }, 'data_b64', [encodeNpyHeader(coreDtype, shape), new Uint8Array(c.buffer, c.byteOffset, c.byteLength)]);
      });
      sendJsonPieces(
        ctx,
        withList(
          {
            key,
            namespace,
            version: row.version,
            target,
            dtype: row.dtype,
            shape: shapeOf(row),
            layout: row.layout,
            ranks: ranksOf(row),
          },
          'cores',
          cores,
        ),
      );
      return;
    }

    const shape = shapeOf(row);
    const accept = ctx.accepts('application/json', 'application/x-npy', 'application/octet-stream');
    const raw = accept === 'application/x-npy' || accept === 'application/octet-stream';
    const facts = {
      key,
      namespace,
      version: row.version,
      target,
      kind: row.kind,
      dtype: row.dtype,
      layout: row.layout,
      verdict: row.verdict,
    };
    const limit = deps.config.maxPayloadBytes;

    if (partial) {
      if (row.kind === 'blob') throw badRequest('a blob has no axes: region, level and points apply to arrays', { field: partialField });
      const part = deps.entries.planSelection(row, toSelection(shape, { region, level, points }));
      if (part.bytes > limit) {
        throw payloadTooLarge(
          `the selection [${part.shape.join(', ')}] (${part.bytes} bytes) would be over the payload limit (${limit} bytes): ` +
            'select fewer values, or at a coarser level',
        );
      }
      const npyHeader = accept === 'application/octet-stream' ? null : encodeNpyHeader(row.dtype, part.shape);
      const bodyBytes = (npyHeader?.length ?? 0) + part.bytes;
      // The selection, the stored data of an uncompressed entry (read whole), the base64 stream.
      await hold.grow(
        part.bytes + (row.compressed ? 0 : row.original_bytes) + (raw ? 0 : streamHeldBytes(base64Length(bodyBytes))),
        turn.signal,
      );
      const data = await deps.entries.readSelection(row, part, turn);
      sendArray(
        ctx,
        raw ? accept : null,
        { ...facts, shape: part.shape, fingerprint: fingerprintOf(row) },
        npyHeader ? [npyHeader, data] : [data],
        bodyBytes,
      );
      return;
    }
    if (row.original_bytes > limit) {
      throw payloadTooLarge(
        `the dense array (${row.original_bytes} bytes) is over the payload limit (${limit} bytes); ` +
          'read it in parts with region, level or points',
      );
    }

    // Reserved before reconstructing: the dense array, and what streaming its base64 holds.
    const npyHeader = accept === 'application/octet-stream' || (!raw && row.kind === 'blob') ? null : encodeNpyHeader(row.dtype, shape);
    const bodyBytes = (npyHeader?.length ?? 0) + row.original_bytes;
    await hold.grow(row.original_bytes + (raw ? 0 : streamHeldBytes(base64Length(bodyBytes))), turn.signal);

    // A compressed entry is reconstructed into a reused buffer, given back once the response no
    // longer needs it (sent, or the connection gone).
    const out = row.compressed ? deps.buffers.acquire(row.original_bytes) : undefined;
    let data: Uint8Array;
    try {
      data = await deps.entries.readDense(row, out, turn);
    } catch (err) {
      if (out) deps.buffers.release(out);
      throw err;
    }
    if (out) ctx.res.once('close', () => deps.buffers.release(out));
    sendArray(
      ctx,
      raw ? accept : null,
      { ...facts, shape, fingerprint: fingerprintOf(row) },
      npyHeader ? [npyHeader, data] : [data],
      bodyBytes,
    );
  };
}

/**
 * serve dense's answer: with a raw `accept` the bytes themselves, the facts in X-Ttstore-* headers (the
 * key percent-encoded); else JSON with the bytes as data_b64 (an .npy, or a blob's bytes).
 */
function sendArray(
  ctx: Context,
  accept: string | null,
  facts: {
    key: string;
    namespace: string;
    version: number;
    kind: string;
    dtype: string;
    shape: number[];
    layout: string;
    verdict: string;
  } & Record<string, unknown>,
  parts: Uint8Array[],
  bodyBytes: number,
): void {
  if (accept) {
    ctx.set('X-Ttstore-Key', headerSafe(facts.key));
    ctx.set('X-Ttstore-Namespace', facts.namespace);
    ctx.set('X-Ttstore-Version', String(facts.version));
    ctx.set('X-Ttstore-Verdict', facts.verdict);
    ctx.set('X-Ttstore-Kind', facts.kind);
    ctx.set('X-Ttstore-Dtype', facts.dtype);
    ctx.set('X-Ttstore-Shape', facts.shape.join(','));
    ctx.set('X-Ttstore-Layout', facts.layout);
    ctx.type = accept;
    ctx.body = Readable.from(
      parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)),
      { objectMode: false },
    );
    ctx.length = bodyBytes;
    return;
  }
  sendJsonPieces(ctx, withBase64(facts, 'data_b64', parts));
}

/**
 * Cores placed by serve target gpu leave the device as soon as their entry can no longer be read
 * (a delete hides every version of a key; a tenant purge removes all of its entries), instead of
 * holding device memory until the LRU budget pushes them out.
 */
export function releaseGpuCoresOnRemoval(entries: Pick<EntryService, 'onChange'>, gpu: GpuPlacement | undefined): void {
  if (!gpu) return;
  entries.onChange((change) => {
    for (const id of change.removedIds ?? []) gpu.evict(id);
  });
}

/**
 * Target gpu: the entry's cores placed on `device` (GPU core placement, LRU under
 * SVC_GATE_GPU_CACHE_BYTES). 501 without a CUDA build, 503 without a usable device or memory,
 * 400 for a device index the server does not have, 409 for an entry stored uncompressed.
 */
async function serveGpu(deps: StorageDeps, row: EntryRow, device: string): Promise<Record<string, unknown>> {
  const info = deps.engine.info();
  const gpu = deps.engine.gpu;
  if (!info.cudaCompiled || !gpu) {
    throw new ProblemError(
      501,
      'gpu_unsupported',
      `this build has no CUDA backend, so ${device} cannot be used; serve with target dense or cores`,
    );
  }
  if (info.backend !== 'cuda' || info.cudaDevices === 0) {
    throw new ProblemError(
      503,
      'gpu_unavailable',
      info.cudaDevices === 0
        ? `no usable CUDA device on this server, so ${device} cannot be used; serve with target dense or cores`
        : `the engine runs on the CPU backend (SVC_GATE_ENGINE_BACKEND=cpu), so ${device} cannot be used`,
    );
  }
  const index = Number(device.slice('cuda:'.length));
  if (index >= info.cudaDevices) {
    throw badRequest(
      `device ${device} does not exist: this server has ${info.cudaDevices} CUDA device${info.cudaDevices === 1 ? '' : 's'} (cuda:0${info.cudaDevices > 1 ? `..cuda:${info.cudaDevices - 1}` : ''})`,
    );
  }
  if (!row.compressed) {
    throw new ProblemError(
      409,
      'not_compressed',
      `entry ${JSON.stringify(row.key)} version ${row.version} is stored uncompressed (passthrough) and has no cores to place`,
    );
  }
  const tt = await deps.entries.readCores(row);
  let placed;
  try {
    placed = await gpu.place(index, row.id, tt);
  } catch (err) {
    if (err instanceof GpuPlacementError) {
      if (err.refusal === 'invalid_device') throw badRequest(err.message);
      if (err.refusal === 'gpu_unsupported') throw new ProblemError(501, 'gpu_unsupported', err.message);
      throw new ProblemError(503, 'gpu_unavailable', `${device}: ${err.message}`);
    }
    throw err;
  }
  return {
    key: row.key,
    namespace: row.namespace,
    version: row.version,
    target: 'gpu',
    device,
    placed: true,
    resident_before: placed.residentBefore,
    gpu_core_bytes: placed.bytes,
    n_cores: tt.modes.length,
    ranks: ranksOf(row),
  };
}

export function deleteHandler(deps: StorageDeps): Middleware {
  return async function del(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const { namespace, key } = namespaceAndKey(ctx, '/v1/delete/');
    await gate.authorize(namespace, 'delete');
    const r = await deps.entries.delete(tenant.tenantId, namespace, key);
    ctx.body = { key, namespace, deleted: true, versions: r.versions, purge_after: r.purgeAfter };
  };
}

export function listHandler(deps: StorageDeps): Middleware {
  return async function list(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const [ns] = rawSegments(ctx, '/v1/list/', 1) as [string];
    const namespace = validateNamespace(decodePathSegment(ns, 'namespace'));
    const { prefix = '', limit, offset } = parseParams(listQuery, ctx.query);
    await gate.authorize(namespace, 'list');
    const { rows, total } = await deps.entries.list(tenant.tenantId, namespace, prefix, limit, offset);
    ctx.body = { namespace, prefix, keys: rows.map(listItemView), count: rows.length, total, limit, offset };
  };
}
