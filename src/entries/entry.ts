// An entry as stored (one row of `entries`) and the shapes the storage responses give it
// (CONTRACT.md section 6).
import type { DType, Fingerprint, LayoutName } from '../engine/types.js';
import type { Verdict } from './oracle.js';

export interface EntryRow {
  id: number;
  tenant_id: string;
  namespace: string;
  key: string;
  version: number;
  kind: 'array' | 'blob';
  dtype: DType;
  shape: string;
  layout: LayoutName;
  modes: string;
  ranks: string;
  core_dtype: 'float32' | 'float64' | null;
  verdict: Verdict;
  compressed: number;
  original_bytes: number;
  stored_core_bytes: number;
  frobenius_error: number;
  max_abs_error: number;
  relative_error: number;
  tolerance: number;
  max_rank_request: number | null;
  domain: string;
  source: 'put' | 'put_cores';
  passthrough_reason: string | null;
  metadata: string;
  norm: number | null;
  created_at: number;
  blob_id: string;
  blob_kind: 'raw' | 'cores';
  checksum: string;
  deleted_at: number | null;
}

/** Parsed JSON columns, cached on the row object. */
export function shapeOf(row: Pick<EntryRow, 'shape'>): number[] {
  return JSON.parse(row.shape) as number[];
}
export function ranksOf(row: EntryRow): number[] {
  return JSON.parse(row.ranks) as number[];
}

export function fingerprintOf(row: EntryRow): Fingerprint {
  return { frobenius_error: row.frobenius_error, max_abs_error: row.max_abs_error, relative_error: row.relative_error };
}

export function compressionRatio(row: EntryRow): number {
  return row.compressed && row.stored_core_bytes > 0 ? row.original_bytes / row.stored_core_bytes : 1;
}

function common(row: EntryRow) {
  const ranks = ranksOf(row);
  return {
    key: row.key,
    namespace: row.namespace,
    version: row.version,
    kind: row.kind,
    dtype: row.dtype,
    shape: shapeOf(row),
    layout: row.layout,
    compressed: row.compressed === 1,
    compression_ratio: compressionRatio(row),
    original_bytes: row.original_bytes,
    stored_core_bytes: row.stored_core_bytes,
    n_cores: Math.max(0, ranks.length - 1),
    ranks,
    max_rank: ranks.length > 0 ? Math.max(...ranks) : 0,
    fingerprint: fingerprintOf(row),
    domain: row.domain,
    created_at: row.created_at,
  };
}

/** Response of put and put_cores (and the items of put_cores_batch). */
export function putView(row: EntryRow) {
  return { ...common(row), verdict: row.verdict, tolerance: row.tolerance };
}

const getViews = new WeakMap<EntryRow, ReturnType<typeof buildGetView>>();

/**
 * Response of GET /v1/get: SPEC.md's fields (oracle_verdict, total_core_bytes) plus CONTRACT.md's.
 * Memoised per row object (rows are immutable; cached rows are shared), so a hot GET parses no JSON.
 */
export function getView(row: EntryRow): ReturnType<typeof buildGetView> {
  let v = getViews.get(row);
  if (!v) {
    v = buildGetView(row);
    getViews.set(row, v);
  }
  return v;
}

function buildGetView(row: EntryRow) {
  const c = common(row);
  return {
    ...c,
    oracle_verdict: row.verdict,
    verdict: row.verdict,
    total_core_bytes: row.stored_core_bytes,
    tolerance: row.tolerance,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  };
}

export interface ListRow {
  key: string;
  version: number;
  created_at: number;
  verdict: Verdict;
  compressed: number;
  original_bytes: number;
  stored_core_bytes: number;
}

export function listItemView(row: ListRow) {
  return {
    key: row.key,
    version: row.version,
    created_at: row.created_at,
    verdict: row.verdict,
    compressed: row.compressed === 1,
    original_bytes: row.original_bytes,
    stored_core_bytes: row.stored_core_bytes,
  };
}

/** JSON with object keys sorted at every depth: equal values give equal text (metadata index). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}
