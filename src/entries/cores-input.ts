// Validation of put_cores entries (CONTRACT.md section 6): every core an .npy [r_prev, n, r_next] of
// float32/float64, r_0 = r_d = 1, neighbouring ranks equal, product of the n equal to the product of
// the shape, finite values; the result is a TensorTrain the engine can reconstruct.
import { badRequest, payloadTooLarge, ProblemError } from '../errors.js';
import { decodeBase64 } from '../codec/base64.js';
import { decodeNpy, MAX_DIMS } from '../codec/npy.js';
import { base64Length, MAX_BATCH_ENTRIES, NPY_MAX_HEADER_BYTES } from '../input-limits.js';
import { DTYPES, ITEM_SIZE, type DType, type Engine, type LayoutName, type TensorTrain } from '../engine/types.js';
import { validateKey } from './identifiers.js';
import { resolveTarget } from './oracle.js';
import { validateMetadata } from './metadata.js';
import type { CoresInput } from './service.js';

const YIELD_EVERY = 1 << 22;
/** Validating a batch gives the event loop back this often (a batch of 1000 entries takes hundreds of ms). */
const BATCH_SLICE_MS = 5;

export interface CoresLimits {
  maxPayloadBytes: number;
}

/** True when every element is finite; yields to the event loop on very large cores. */
async function allFinite(a: Float32Array | Float64Array): Promise<boolean> {
  for (let from = 0; from < a.length; from += YIELD_EVERY) {
    const to = Math.min(a.length, from + YIELD_EVERY);
    for (let i = from; i < to; i++) if (!Number.isFinite(a[i]!)) return false;
    if (to < a.length) await new Promise((r) => setImmediate(r));
  }
  return true;
}

function positiveInts(v: unknown, field: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 1)) {
    throw badRequest(`${field} must be a list of integers >= 1`);
  }
  return v as number[];
}

/** Validate one put_cores body (without namespace). */
export async function parseCoresEntry(body: unknown, engine: Engine, limits: CoresLimits): Promise<CoresInput> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('each entry must be a JSON object');
  const b = body as Record<string, unknown>;
  const key = validateKey(b.key);
  const metadata = validateMetadata(b.metadata);
  const { domain } = resolveTarget(b.domain, undefined, undefined);

  let dtype: DType = 'float32';
  if (b.dtype !== undefined && b.dtype !== null) {
    if (typeof b.dtype !== 'string' || !(DTYPES as readonly string[]).includes(b.dtype) || b.dtype === 'bool') {
      throw badRequest(`dtype must be one of ${DTYPES.filter((d) => d !== 'bool').join(', ')}`);
    }
    dtype = b.dtype as DType;
  }
  let layout: LayoutName = 'row_major';
  if (b.layout !== undefined && b.layout !== null) {
    if (b.layout !== 'row_major' && b.layout !== 'interleaved') throw badRequest('layout must be row_major or interleaved');
    layout = b.layout;
  }

  if (!Array.isArray(b.cores) || b.cores.length === 0) throw badRequest('cores must be a non-empty list of {data_b64}');
  const cores: Array<Float32Array | Float64Array> = [];
  const modes: number[] = [];
  const ranks: number[] = [1];
  let coreBytes = 0;
  for (const [k, c] of b.cores.entries()) {
    const where = `cores[${k}]`;
    if (c === null || typeof c !== 'object' || typeof (c as { data_b64?: unknown }).data_b64 !== 'string') {
      throw badRequest(`${where} must be an object with data_b64 (an .npy of shape [r_prev, n, r_next])`);
    }
    const text = (c as { data_b64: string }).data_b64;
    if (text.length > base64Length(limits.maxPayloadBytes + NPY_MAX_HEADER_BYTES)) throw payloadTooLarge(`${where} is over the payload limit`);
    const bytes = await decodeBase64(text, `${where}.data_b64`);
    let arr;
    try {
      arr = await decodeNpy(bytes, limits.maxPayloadBytes);
    } catch (err) {
      if (err instanceof ProblemError) throw badRequest(`${where}: ${err.message}`);
      throw err;
    }
    if (arr.dtype !== 'float32' && arr.dtype !== 'float64') throw badRequest(`${where} must be float32 or float64, got ${arr.dtype}`);
    if (arr.shape.length !== 3) throw badRequest(`${where} must have shape [r_prev, n, r_next], got [${arr.shape.join(', ')}]`);
    const [rp, n, rn] = arr.shape as [number, number, number];
    if (rp < 1 || n < 1 || rn < 1) throw badRequest(`${where} has an empty dimension`);
    if (rp !== ranks[k]) {
      throw badRequest(k === 0 ? `${where}: r_0 must be 1, got ${rp}` : `${where}: r_prev ${rp} does not match the previous core's r_next ${ranks[k]}`);
    }
    const data = arr.data.byteOffset % 8 === 0 ? arr.data : Buffer.from(arr.data);
    const view = arr.dtype === 'float64'
      ? new Float64Array(data.buffer, data.byteOffset, data.length / 8)
      : new Float32Array(data.buffer, data.byteOffset, data.length / 4);
    if (!(await allFinite(view))) throw badRequest(`${where} holds NaN or Inf`);
    coreBytes += view.byteLength;
    if (coreBytes > limits.maxPayloadBytes) throw payloadTooLarge('the cores are over the payload limit');
    cores.push(view);
    modes.push(n);
    ranks.push(rn);
  }
  if (ranks[ranks.length - 1] !== 1) throw badRequest(`the last core's r_next must be 1, got ${ranks[ranks.length - 1]}`);

  const numelModes = modes.reduce((a, m) => a * m, 1);
  let shape: number[];
  if (b.shape === undefined || b.shape === null) {
    shape = [numelModes];
  } else {
    if (Array.isArray(b.shape) && b.shape.length > MAX_DIMS) throw badRequest(`shape may have at most ${MAX_DIMS} dimensions`);
    shape = positiveInts(b.shape, 'shape');
  }
  const numel = shape.reduce((a, d) => a * d, 1);
  if (numel !== numelModes) {
    throw badRequest(`the product of the mode sizes (${numelModes}) does not equal the product of shape [${shape.join(', ')}] (${numel})`);
  }
  if (numel * ITEM_SIZE[dtype] > limits.maxPayloadBytes) {
    throw payloadTooLarge(`the dense array (${numel * ITEM_SIZE[dtype]} bytes) would be over the payload limit`);
  }
  if (layout === 'interleaved') {
    let want: number[];
    try {
      want = engine.layoutFor(shape, 'interleaved').modes;
    } catch {
      throw badRequest(`shape [${shape.join(', ')}] has no interleaved layout`);
    }
    if (want.length !== modes.length || want.some((m, i) => m !== modes[i])) {
      throw badRequest(`with layout interleaved, shape [${shape.join(', ')}] needs mode sizes [${want.join(', ')}], got [${modes.join(', ')}]`);
    }
  }
  // The engine takes one element type per train: mixed cores are widened to float64.
  const f64 = cores.some((c) => c instanceof Float64Array);
  const uniform = f64 ? cores.map((c) => (c instanceof Float64Array ? c : Float64Array.from(c))) : cores;
  const tt: TensorTrain = { modes, ranks, cores: uniform as Float32Array[] | Float64Array[] };
  return { key, tt, shape, dtype, layout, metadata, domain };
}

/** Validate a put_cores_batch's entries; the first invalid one is a 4xx carrying its `index`. */
export async function parseCoresBatch(entries: unknown, namespace: string, engine: Engine, limits: CoresLimits): Promise<CoresInput[]> {
  if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_BATCH_ENTRIES) {
    throw badRequest(`entries must be a list of 1 to ${MAX_BATCH_ENTRIES} put_cores bodies`);
  }
  const out: CoresInput[] = [];
  let sliceStart = performance.now();
  for (const [index, e] of entries.entries()) {
    if (performance.now() - sliceStart > BATCH_SLICE_MS) {
      await new Promise((r) => setImmediate(r));
      sliceStart = performance.now();
    }
    try {
      const ns = (e as { namespace?: unknown } | null)?.namespace;
      if (ns !== undefined && ns !== null && ns !== namespace) {
        throw badRequest(`entries carry no namespace of their own (the batch's is ${namespace})`);
      }
      out.push(await parseCoresEntry(e, engine, limits));
    } catch (err) {
      if (err instanceof ProblemError) {
        throw new ProblemError(err.status, err.code, `entries[${index}]: ${err.message}`, { ...err.extra, index }, err.headers);
      }
      throw err;
    }
  }
  return out;
}
