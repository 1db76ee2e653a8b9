// The train rules of put_cores entries, after the request schema checked their fields (CONTRACT.md
// sections 6 and 8): every core an .npy [r_prev, n, r_next]
// of float32/float64, r_0 = r_d = 1, neighbouring ranks equal and at most MAX_RANK, product of the n
// equal to the product of the shape, finite values; the result is a TensorTrain the engine can
// reconstruct, contract and (for queries) bring into its own mode split.
//
// Checking runs in two passes so that a hostile train costs nothing: the first reads only the .npy
// headers (the first bytes of each core, decoded from base64 as the body arrived) and refuses bad
// ranks, sizes and work from them; the second reads the core data. A batch inspects every entry
// before it reads any core's data.
import { badRequest, payloadTooLarge, ProblemError } from '../http/errors.js';
import type { Base64Data } from '../codec/base64.js';
import { decodeNpy, parseNpyHeader, type NpyHeader } from '../codec/npy.js';
import { MAX_REBUILD_WORK_PER_VALUE, MAX_RANK, MAX_TRAIN_WORK } from '../engine/limits.js';
import { MAX_BATCH_ENTRIES, NPY_MAX_HEADER_BYTES } from '../limits/input.js';
import { ITEM_SIZE, type DType, type Engine, type LayoutName, type TensorTrain } from '../engine/types.js';
import { DEFAULT_DOMAIN, type Domain } from './oracle.js';
import type { CoresInput } from './service.js';

const YIELD_EVERY = 1 << 22;
/** Inspecting a batch gives the event loop back this often (a batch of 1000 entries takes hundreds of ms). */
const BATCH_SLICE_MS = 5;

export interface CoresLimits {
  maxPayloadBytes: number;
}

/** One put_cores entry checked from its headers: what decoding its data needs. */
export interface InspectedEntry {
  input: Omit<CoresInput, 'tt'>;
  /** Each core's data (decoded from base64, still to be checked) and its header. */
  cores: Array<{ data: Base64Data; header: NpyHeader }>;
  modes: number[];
  ranks: number[];
  /** Multiply-adds of the train's norm, the engine work the put itself does. */
  putWork: number;
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

/** The .npy header of a core, read from the front of its bytes alone (its data is not looked at). */
function coreHeader(data: Base64Data, where: string, maxElements: number): NpyHeader {
  // The bytes of whole 4-character groups covering the largest header allowed.
  const prefixBytes = Math.ceil(NPY_MAX_HEADER_BYTES / 3) * 3;
  try {
    return parseNpyHeader(data.bytes(`${where}.data_b64`).subarray(0, prefixBytes), maxElements);
  } catch (err) {
    if (err instanceof ProblemError) throw badRequest(`${where}: ${err.message}`);
    throw err;
  }
}

/**
 * A put_cores entry as its request schema (routes/storage/endpoints.ts) has checked it: each field
 * well-formed, each core's data_b64 decoded from base64, nothing yet about the train they make.
 */
export interface CoresEntryFields {
  key: string;
  cores: Array<{ data_b64: Base64Data }>;
  shape?: number[];
  dtype?: Exclude<DType, 'bool'>;
  layout?: LayoutName;
  metadata?: Record<string, unknown>;
  domain?: Domain;
}

/**
 * Check one put_cores entry's train from the cores' headers: 400 or 413 before any core data is
 * decoded or any memory sized by a rank is allocated.
 */
export function inspectCoresEntry(b: CoresEntryFields, engine: Engine, limits: CoresLimits): InspectedEntry {
  const { key, dtype = 'float32', layout = 'row_major', metadata = {}, domain = DEFAULT_DOMAIN } = b;
  const cores: InspectedEntry['cores'] = [];
  const modes: number[] = [];
  const ranks: number[] = [1];
  let coreBytes = 0;
  for (const [k, c] of b.cores.entries()) {
    const where = `cores[${k}]`;
    const data = c.data_b64;
    if (data.impliedLength > limits.maxPayloadBytes + NPY_MAX_HEADER_BYTES) throw payloadTooLarge(`${where} is over the payload limit`);
    const header = coreHeader(data, where, limits.maxPayloadBytes);
    if (header.dtype !== 'float32' && header.dtype !== 'float64')
      throw badRequest(`${where} must be float32 or float64, got ${header.dtype}`, { core: k });
    if (header.shape.length !== 3)
      throw badRequest(`${where} must have shape [r_prev, n, r_next], got [${header.shape.join(', ')}]`, { core: k });
    const [rp, n, rn] = header.shape as [number, number, number];
    if (rp < 1 || n < 1 || rn < 1) throw badRequest(`${where} has an empty dimension`, { core: k });
    if (rp > MAX_RANK || rn > MAX_RANK) {
      throw badRequest(`${where} has shape [${rp}, ${n}, ${rn}]: every rank must be at most ${MAX_RANK} (the largest max_rank)`, {
        core: k,
      });
    }
    if (rp !== ranks[k]) {
      throw badRequest(
        k === 0 ? `${where}: r_0 must be 1, got ${rp}` : `${where}: r_prev ${rp} does not match the previous core's r_next ${ranks[k]}`,
        { core: k },
      );
    }
    coreBytes += rp * n * rn * ITEM_SIZE[header.dtype];
    if (coreBytes > limits.maxPayloadBytes) throw payloadTooLarge('the cores are over the payload limit');
    cores.push({ data, header });
    modes.push(n);
    ranks.push(rn);
  }
  if (ranks[ranks.length - 1] !== 1) throw badRequest(`the last core's r_next must be 1, got ${ranks[ranks.length - 1]}`);

  const numelModes = modes.reduce((a, m) => a * m, 1);
  const shape = b.shape ?? [numelModes];
  const numel = shape.reduce((a, d) => a * d, 1);
  if (numel !== numelModes) {
    throw badRequest(`the product of the mode sizes (${numelModes}) does not equal the product of shape [${shape.join(', ')}] (${numel})`);
  }
  // The engine's split of the shape: an interleaved train must use it; a row_major one may use any
  // split, and is brought into the engine's to be compared with other entries (CONTRACT.md section 3).
  let engineModes: number[];
  try {
    engineModes = engine.layoutFor(shape, layout).modes;
  } catch {
    throw badRequest(`shape [${shape.join(', ')}] has no ${layout} layout`);
  }
  if (layout === 'interleaved' && (engineModes.length !== modes.length || engineModes.some((m, i) => m !== modes[i]))) {
    throw badRequest(
      `with layout interleaved, shape [${shape.join(', ')}] needs mode sizes [${engineModes.join(', ')}], got [${modes.join(', ')}]`,
    );
  }
  const work = engine.trainWork(modes, ranks, engineModes);
  if (!work.withinLimits) {
    const e = (x: number) => x.toExponential(2);
    throw badRequest(
      `the train's ranks [${ranks.join(', ')}] over modes [${modes.join(', ')}] would cost the engine too many multiply-adds ` +
        `in one call: norm ${e(work.contraction)}, comparison in the engine's mode split [${engineModes.join(', ')}] ` +
        `${e(work.resplit)} (each at most ${e(MAX_TRAIN_WORK)}), dense rebuild ${e(work.reconstruction)} (at most ` +
        `${e(Math.max(MAX_TRAIN_WORK, MAX_REBUILD_WORK_PER_VALUE * numel))})`,
      { work: work.max, work_limit: MAX_TRAIN_WORK },
    );
  }
  if (work.resplitElements * 4 > limits.maxPayloadBytes) {
    throw payloadTooLarge(
      `in the engine's mode split [${engineModes.join(', ')}], which queries compare in, this train would hold ` +
        `${work.resplitElements} values: more than the payload limit allows for cores`,
    );
  }
  return { input: { key, shape, dtype, layout, metadata, domain }, cores, modes, ranks, putWork: work.contraction };
}

/** Decode an inspected entry's cores (400 naming the core for bad data or values). */
export async function decodeCoresEntry(entry: InspectedEntry, limits: CoresLimits): Promise<CoresInput> {
  const cores: Array<Float32Array | Float64Array> = [];
  for (const [k, core] of entry.cores.entries()) {
    const where = `cores[${k}]`;
    // Each core's checking is one stretch of the event loop: other requests get in between.
    await new Promise((r) => setImmediate(r));
    let arr;
    try {
      arr = await decodeNpy(core.data.bytes(`${where}.data_b64`), limits.maxPayloadBytes);
    } catch (err) {
      if (err instanceof ProblemError) throw badRequest(`${where}: ${err.message}`, { core: k });
      throw err;
    }
    const data = arr.data.byteOffset % 8 === 0 ? arr.data : Buffer.from(arr.data);
    const view =
      arr.dtype === 'float64'
        ? new Float64Array(data.buffer, data.byteOffset, data.length / 8)
        : new Float32Array(data.buffer, data.byteOffset, data.length / 4);
    if (!(await allFinite(view))) throw badRequest(`${where} holds NaN or Inf`, { core: k });
    cores.push(view);
  }
  // The engine takes one element type per train: mixed cores are widened to float64.
  const f64 = cores.some((c) => c instanceof Float64Array);
  const uniform = f64 ? cores.map((c) => (c instanceof Float64Array ? c : Float64Array.from(c))) : cores;
  const tt: TensorTrain = { modes: entry.modes, ranks: entry.ranks, cores: uniform as Float32Array[] | Float64Array[] };
  return { ...entry.input, tt };
}

/** Check one put_cores entry's train: its headers first, then its data. */
export async function parseCoresEntry(entry: CoresEntryFields, engine: Engine, limits: CoresLimits): Promise<CoresInput> {
  return decodeCoresEntry(inspectCoresEntry(entry, engine, limits), limits);
}

/** A batch entry's problem, carrying its `index`. */
function atIndex(index: number, err: unknown): unknown {
  if (!(err instanceof ProblemError)) return err;
  return new ProblemError(err.status, err.code, `entries[${index}]: ${err.message}`, { ...err.extra, index }, err.headers);
}

/**
 * Validate a put_cores_batch's entries, each by `fields` (its request schema) and then its train; the
 * first invalid one is a 4xx carrying its `index`. Every entry is checked, fields and headers, before
 * any entry's data is decoded (giving the event loop back as it goes), and the norms the batch asks
 * of the engine together stay within the work one train may cost.
 */
export async function parseCoresBatch(
  entries: unknown,
  namespace: string,
  fields: (entry: unknown) => CoresEntryFields,
  engine: Engine,
  limits: CoresLimits,
): Promise<CoresInput[]> {
  if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_BATCH_ENTRIES) {
    throw badRequest(`entries must be a list of 1 to ${MAX_BATCH_ENTRIES} put_cores bodies`);
  }
  const inspected: InspectedEntry[] = [];
  let putWork = 0;
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
      const entry = inspectCoresEntry(fields(e), engine, limits);
      putWork += entry.putWork;
      if (putWork > MAX_TRAIN_WORK) {
        throw badRequest(
          `the norms of entries[0..${index}] together would cost the engine ${putWork.toExponential(2)} ` +
            `multiply-adds; a batch may ask at most ${MAX_TRAIN_WORK.toExponential(2)}`,
          { work: putWork, work_limit: MAX_TRAIN_WORK },
        );
      }
      inspected.push(entry);
    } catch (err) {
      throw atIndex(index, err);
    }
  }
  const out: CoresInput[] = [];
  for (const [index, entry] of inspected.entries()) {
    try {
      out.push(await decodeCoresEntry(entry, limits));
    } catch (err) {
      throw atIndex(index, err);
    }
  }
  return out;
}
