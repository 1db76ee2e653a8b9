// The shapes the storage responses give an entry (CONTRACT.md section 6), from its stored row
// (src/store/entries.ts).
import type { Fingerprint } from '../engine/types.js';
import type { EntryRow, ListRow } from '../store/entries.js';

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
