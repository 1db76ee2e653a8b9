// Which entries a query looks at, read from SQLite: the candidates of a top-K (latest live entries
// comparable with the query, CONTRACT.md sections 3 and 6) and the matches of a metadata search.
import type { Database } from '../store/db.js';
import type { DType, LayoutName } from '../engine/types.js';
import type { StoredRef } from '../entries/service.js';
import { filterPairs, matchCondition, type Filters } from './filters.js';

/**
 * Entries are comparable when shape and layout are equal (the columns hold canonical JSON), whatever
 * their mode sizes: a row_major train put with its own split is compared in the engine's (CoreCache).
 */
export interface Comparable {
  shape: string;
  layout: LayoutName;
}

/**
 * A candidate: what scoring needs. Where its operand lives is read only when the operand is not in
 * the core cache (storageRefs): a top-K over a warm namespace reads three columns per candidate.
 */
export interface CandidateRow {
  id: number;
  key: string;
  /** ||entry||_2 kept at write time; never null here (non-finite entries are not candidates). */
  norm: number;
}

/** Where an entry's operand lives: its blob and how to read it. */
export interface StorageRef extends StoredRef {
  id: number;
  key: string;
  dtype: DType;
  /** The stored mode sizes (canonical JSON). */
  modes: string;
}

/**
 * Latest live entries of (tenant, namespace) comparable with `like`, holding finite values, other
 * than `excludeKey`, matching `filters`; in ascending key (byte) order, so an index is a key rank.
 */
export function listCandidates(
  db: Database, tenantId: string, namespace: string, like: Comparable, excludeKey: string | null, filters: Filters,
): Promise<CandidateRow[]> {
  const match = matchCondition(filterPairs(filters), 'e.id');
  return db.all<CandidateRow>(
    `SELECT e.id, e.key, e.norm
     FROM entry_keys k JOIN entries e ON e.id = k.live_id
     WHERE k.tenant_id = ? AND k.namespace = ? AND e.shape = ? AND e.layout = ?
       AND e.norm IS NOT NULL AND k.key IS NOT ? AND ${match.sql}
     ORDER BY k.key`,
    [tenantId, namespace, like.shape, like.layout, excludeKey, ...match.params]);
}

/** Chunk of ids per statement (below SQLite's default limit of bound parameters). */
const REF_CHUNK = 500;

/** The storage refs of entries by id (any state: a candidate deleted meanwhile still has its blob). */
export async function storageRefs(db: Database, tenantId: string, ids: number[]): Promise<StorageRef[]> {
  const out: StorageRef[] = [];
  for (let i = 0; i < ids.length; i += REF_CHUNK) {
    const chunk = ids.slice(i, i + REF_CHUNK);
    out.push(...await db.all<StorageRef>(
      `SELECT id, key, blob_id, blob_kind, checksum, original_bytes, shape, layout, dtype, modes
       FROM entries WHERE tenant_id = ? AND id IN (${chunk.map(() => '?').join(',')})`, [tenantId, ...chunk]));
  }
  return out;
}

export interface SearchRow {
  key: string;
  version: number;
  metadata: string;
}

/**
 * Latest live entries whose metadata matches every filter, in ascending key (byte) order. With at
 * least one filter the walk starts from the (tenant, namespace, name, value) index of the first, so
 * the cost follows the matches, not the namespace's size.
 */
export function searchMetadata(db: Database, tenantId: string, namespace: string, filters: Filters): Promise<SearchRow[]> {
  const pairs = filterPairs(filters);
  if (pairs.length === 0) {
    return db.all<SearchRow>(
      `SELECT e.key, e.version, e.metadata FROM entry_keys k JOIN entries e ON e.id = k.live_id
       WHERE k.tenant_id = ? AND k.namespace = ? ORDER BY k.key`, [tenantId, namespace]);
  }
  const [first, ...rest] = pairs as [[string, string], ...Array<[string, string]>];
  const more = matchCondition(rest, 'm0.entry_id');
  return db.all<SearchRow>(
    `SELECT e.key, e.version, e.metadata
     FROM entry_metadata m0
     JOIN entry_keys k ON k.tenant_id = m0.tenant_id AND k.namespace = m0.namespace AND k.key = m0.key
     JOIN entries e ON e.id = m0.entry_id
     WHERE m0.tenant_id = ? AND m0.namespace = ? AND m0.name = ? AND m0.value_json = ?
       AND k.live_id = m0.entry_id AND ${more.sql}
     ORDER BY m0.key`,
    [tenantId, namespace, first[0], first[1], ...more.params]);
}
