// The Oracle's policy (CONTRACT.md section 3): which fidelity target a put asks for, and which of the
// four verdicts the measured reconstruction earns. It compresses, measures, and decides; it never
// assumes a verdict. Whatever would lose data beyond the target is stored as it is (passthrough).
import type { GatheredValues } from '../codec/npy-gather.js';
import { ENGINE_INVALID } from '../engine/index.js';
import { compressWork } from '../engine/limits.js';
import type { Verdict } from '../store/entries.js';
import {
  ITEM_SIZE,
  type CompressOptions,
  type CompressResult,
  type DType,
  type Engine,
  type Fingerprint,
  type LayoutName,
  type TensorTrain,
} from '../engine/types.js';

export const DOMAIN_TOLERANCE = {
  structured_data: 1e-6,
  simulation: 1e-5,
  timeseries: 1e-4,
  embedding: 1e-3,
  image: 1e-3,
  lossless: 0,
} as const;
export type Domain = keyof typeof DOMAIN_TOLERANCE;
export const DEFAULT_DOMAIN: Domain = 'structured_data';

/** What a put asks for: the domain, the tolerance in force, and the caller's rank budget. */
export interface Target {
  domain: Domain;
  tolerance: number;
  maxRank?: number;
  /** The caller chose domain, tolerance or max_rank (as opposed to all defaults). */
  explicit?: boolean;
}

/**
 * The target a put asks for: `tolerance` wins over the domain's. The values come checked by the
 * request's schema (routes/fields.ts: domain, tolerance, maxRank); absent ones take the defaults.
 */
export function resolveTarget(domain?: Domain, tolerance?: number, maxRank?: number): Target {
  const d = domain ?? DEFAULT_DOMAIN;
  const t = tolerance ?? DOMAIN_TOLERANCE[d];
  const explicit = [domain, tolerance, maxRank].some((v) => v !== undefined);
  return maxRank === undefined ? { domain: d, tolerance: t, explicit } : { domain: d, tolerance: t, maxRank, explicit };
}

export const ZERO_FINGERPRINT: Fingerprint = Object.freeze({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });

export type PassthroughReason =
  | 'below_threshold'
  | 'non_finite'
  | 'engine_rejected'
  | 'not_compressible'
  | 'over_tolerance'
  | 'blob_not_exact'
  | 'too_small'
  | 'integers_not_exact';

export type Representation =
  | { compressed: false; verdict: 'passthrough'; reason: PassthroughReason; inputNorm?: number | null }
  | {
      compressed: true;
      verdict: Exclude<Verdict, 'passthrough'>;
      tt: TensorTrain;
      layout: LayoutName;
      fingerprint: Fingerprint;
      storedCoreBytes: number;
    };

/** The data of a put as the Oracle sees it. */
export interface OracleInput {
  kind: 'array' | 'blob';
  dtype: DType;
  shape: number[];
  /** C-order little-endian element bytes (a blob: its bytes). */
  data: Buffer;
  /** The elements as float64 in C order and their sum of squares, when already converted: the engine's first workspace. */
  gathered?: GatheredValues;
}

// Dtypes whose every value float64 holds exactly: for them a zero max_abs_error (measured after the
// cast back) already proves a bit-exact round trip. Floats (signed zeros), 64-bit integers (beyond
// 2^53) and bools (bytes other than 0/1) are compared byte for byte instead.
const EXACT_BY_ERROR = new Set<DType>(['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32']);
const INTEGER_LIKE = new Set<DType>(['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool']);

/**
 * Integer and bool arrays stored with every setting at its default are kept exact (a user storing ids
 * or counts expects them back): the engine is asked for an error small enough that rounding restores
 * every element (max |x - y| <= ||x - y||_2 <= t ||x||_2 < 0.5), and a result that is not exact is
 * stored as it is. A caller who names a domain, a tolerance or max_rank gets the verdicts of
 * CONTRACT.md section 3 as they stand (a uint8 image under `image` may be safe).
 */
export function exactOnly(input: { kind: 'array' | 'blob'; dtype: DType }, target: Target): boolean {
  return input.kind === 'array' && INTEGER_LIKE.has(input.dtype) && !target.explicit;
}

/**
 * Blob target: with ||x|| <= 255 sqrt(n), a relative Frobenius error below this keeps every element
 * within 0.45 of its byte, so the rounding cast back gives every byte exactly.
 */
export function blobTolerance(length: number): number {
  return 0.45 / (255 * Math.sqrt(Math.max(1, length)));
}

export interface OracleOptions {
  engine: Engine;
  compressionThresholdBytes: number;
  /** ||x||_2 of the input (computed off the event loop for large inputs); null when not finite. */
  norm: (input: OracleInput) => Promise<number | null>;
  /** Runs engine work in its turn, given its estimated multiply-adds (the engine admission). */
  run?: <T>(work: () => Promise<T>, estimatedWork: number) => Promise<T>;
}

/**
 * Decide how to store `input`: compress, measure, and give the verdict the reconstruction earns.
 * Rejects only on engine failures other than bad input (those are 500s).
 */
export async function chooseRepresentation(input: OracleInput, target: Target, opts: OracleOptions): Promise<Representation> {
  const early = (reason: PassthroughReason): Representation => ({ compressed: false, verdict: 'passthrough', reason });
  const originalBytes = input.data.length;
  if (originalBytes < opts.compressionThresholdBytes || originalBytes === 0) return early('below_threshold');
  const n = originalBytes / ITEM_SIZE[input.dtype];
  if (n < 2) return early('too_small');

  const blob = input.kind === 'blob';
  const exactMode = exactOnly(input, target);
  let tolerance = blob ? blobTolerance(originalBytes) : target.tolerance;
  let inputNorm: number | null | undefined;
  if (exactMode) {
    inputNorm = await opts.norm(input);
    if (inputNorm !== null && inputNorm > 0) tolerance = Math.min(tolerance, 0.45 / inputNorm);
  }
  const pass = (reason: PassthroughReason): Representation => ({
    compressed: false,
    verdict: 'passthrough',
    reason,
    ...(inputNorm !== undefined ? { inputNorm } : {}),
  });
  const run = opts.run ?? (<T>(work: () => Promise<T>) => work());
  const engine = opts.engine;
  let result: CompressResult;
  try {
    const compressOpts: CompressOptions =
      blob || exactMode || target.maxRank === undefined ? { tolerance } : { tolerance, maxRank: target.maxRank };
    if (input.gathered) {
      compressOpts.gathered = input.gathered.values;
      compressOpts.gatheredSumSquares = input.gathered.sumSquares;
    }
    result = await run(() => engine.compress(input.data, input.dtype, input.shape, compressOpts), compressWork(n));
  } catch (err) {
    // The engine rejects non-finite input (NaN, Inf) as invalid; such data is kept as it is (and so is
    // anything else it declines: storing the bytes as they are never loses data).
    if ((err as { code?: unknown }).code === ENGINE_INVALID) {
      return pass(/finite|nan|inf/i.test((err as Error).message) ? 'non_finite' : 'engine_rejected');
    }
    throw err;
  }
  if (!result.compressible) return pass('not_compressible');

  const compressed = (verdict: Exclude<Verdict, 'passthrough'>): Representation => ({
    compressed: true,
    verdict,
    tt: result.tt,
    layout: result.layout,
    fingerprint: result.fingerprint,
    storedCoreBytes: result.storedCoreBytes,
  });

  const fp = result.fingerprint;
  if (fp.max_abs_error === 0) {
    let identical = EXACT_BY_ERROR.has(input.dtype);
    if (!identical) {
      const { modes, ranks } = result.tt;
      const back = await run(
        () => engine.reconstruct(result.tt, input.shape, result.layout, input.dtype),
        engine.trainWork(modes, ranks, modes).reconstruction,
      );
      identical = Buffer.from(back.data.buffer, back.data.byteOffset, back.data.byteLength).equals(input.data);
    }
    if (identical) return compressed('exact');
  }
  if (blob) return pass('blob_not_exact');
  if (exactMode) return pass('integers_not_exact');
  if (fp.relative_error <= target.tolerance) return compressed('safe');
  if (target.maxRank !== undefined) return compressed('weak');
  return pass('over_tolerance');
}
