// Which entries a query looks at, read from SQLite: the candidates of a top-K (latest live entries
// comparable with the query, CONTRACT.md sections 3 and 6) and the matches of a metadata search.
import type { Database } from './db.js';
import type { CandidateRow, Comparable, SearchRow, StorageRef } from '../entries.js';
import { filterPairs, type Filters } from '../filters.js';
import { metadataMatchSql, OPERAND_BYTES_SQL } from '../sql.js';

/**
 * Latest live entries of (tenant, namespace) comparable with `like`, holding finite values, other
 * than `excludeKey`, matching `filters`; in ascending key (byte) order, so an index is a key rank.
 */
export function listCandidates(
  db: Database,
  tenantId: string,
  namespace: string,
  like: Comparable,
  excludeKey: string | null,
  filters: Filters,
): Promise<CandidateRow[]> {
  const match = bound((param) => metadataMatchSql(filterPairs(filters), 'e.id', param));
  return db.all<CandidateRow>(
    `SELECT e.id, e.key, e.norm, ${OPERAND_BYTES_SQL} AS bytes, e.layout
     FROM entry_keys k JOIN entries e ON e.id = k.live_id
     WHERE k.tenant_id = ? AND k.namespace = ? AND e.shape = ?
       AND e.norm IS NOT NULL AND k.key IS NOT ? AND ${match.sql}
     ORDER BY k.key`,
    [tenantId, namespace, like.shape, excludeKey, ...match.params],
  );
}

/** Chunk of ids per statement (below SQLite's default limit of bound parameters). */
const REF_CHUNK = 500;

/** The storage refs of entries by id (any state: a candidate deleted meanwhile still has its blob). */
export async function storageRefs(db: Database, tenantId: string, ids: number[]): Promise<StorageRef[]> {
  const out: StorageRef[] = [];
  for (let i = 0; i < ids.length; i += REF_CHUNK) {
    const chunk = ids.slice(i, i + REF_CHUNK);
    out.push(
      ...(await db.all<StorageRef>(
        `SELECT id, key, blob_id, blob_kind, checksum, original_bytes, shape, layout, dtype, modes
       FROM entries WHERE tenant_id = ? AND id IN (${chunk.map(() => '?').join(',')})`,
        [tenantId, ...chunk],
      )),
    );
  }
  return out;
}

/**
 * One page (`limit` from `offset`) of the latest live entries whose metadata matches every filter, in
 * ascending key (byte) order, and how many match in all. With at least one filter the walk starts
 * from the (tenant, namespace, name, value) index of the first, so the cost follows the matches, not
 * the namespace's size; the page is chosen on (id, key) alone and only its rows' metadata is read.
 */
export async function searchMetadata(
  db: Database,
  tenantId: string,
  namespace: string,
  filters: Filters,
  limit: number,
  offset: number,
): Promise<{ rows: SearchRow[]; total: number }> {
  const pairs = filterPairs(filters);
  let matches: string;
  let params: Array<string | number>;
  if (pairs.length === 0) {
    matches = `SELECT k.live_id AS id, k.key AS match_key FROM entry_keys k
               WHERE k.tenant_id = ? AND k.namespace = ? AND k.live_id IS NOT NULL`;
    params = [tenantId, namespace];
  } else {
    const [first, ...rest] = pairs as [[string, string], ...Array<[string, string]>];
    const more = bound((param) => metadataMatchSql(rest, 'm0.entry_id', param));
    matches = `SELECT m0.entry_id AS id, m0.key AS match_key
               FROM entry_metadata m0
               JOIN entry_keys k ON k.tenant_id = m0.tenant_id AND k.namespace = m0.namespace AND k.key = m0.key
               WHERE m0.tenant_id = ? AND m0.namespace = ? AND m0.name = ? AND m0.value_json = ?
                 AND k.live_id = m0.entry_id AND ${more.sql}`;
    params = [tenantId, namespace, first[0], first[1], ...more.params];
  }
  const [rows, count] = await Promise.all([
    db.all<SearchRow>(
      `SELECT e.key, e.version, e.metadata
       FROM (${matches} ORDER BY match_key LIMIT ? OFFSET ?) page JOIN entries e ON e.id = page.id
       ORDER BY page.match_key`,
      [...params, limit, offset],
    ),
    db.get<{ total: number }>(`SELECT COUNT(*) AS total FROM (${matches})`, params),
  ]);
  return { rows, total: count?.total ?? 0 };
}

/** SQL made with `?` placeholders, and the values bound to them in order. */
function bound(make: (param: (value: string) => string) => string): { sql: string; params: string[] } {
  const params: string[] = [];
  const sql = make((v) => {
    params.push(v);
    return '?';
  });
  return { sql, params };
}
