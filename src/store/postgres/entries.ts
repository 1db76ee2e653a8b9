// Entries over PostgreSQL: the same tables as on SQLite (entries, entry_keys, entry_metadata). A write
// of any size is one transaction: its key rows are locked by the UPSERT that takes each version
// number, so versions are unique and gap-free per key whichever node writes (a rollback returns the
// number), and its rows become visible together when it commits.
import type { EntryRow, ListRow } from '../../entries/entry.js';
import type {
  CandidateRow,
  Comparable,
  EntrySearch,
  EntryStore,
  Hidden,
  KeyScope,
  NewEntry,
  PurgedEntry,
  PurgeScope,
  SearchRow,
  StorageRef,
} from '../entries.js';
import { filterPairs, type Filters } from '../filters.js';
import { OPERAND_BYTES_SQL, STORED_BYTES_SQL } from '../sql.js';
import type { Transaction } from '../transaction.js';
import { asTransaction, type PgDatabase, type PgTx } from './db.js';
import { canonicalJson } from '../../entries/entry.js';

/** Numbered parameters ($1, $2, ...) of one statement, in the order they are added. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

export class PgEntryStore implements EntryStore, EntrySearch {
  constructor(private readonly db: PgDatabase) {}

  async storedBytesByTenant(): Promise<Array<{ tenantId: string; bytes: number }>> {
    const rows = await this.db.all<{ tenant_id: string; bytes: number }>(
      `SELECT tenant_id, SUM(${STORED_BYTES_SQL}) AS bytes FROM entries GROUP BY tenant_id`,
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, bytes: r.bytes }));
  }

  async blobIds(): Promise<Set<string>> {
    return new Set((await this.db.all<{ blob_id: string }>('SELECT blob_id FROM entries')).map((r) => r.blob_id));
  }

  insert(
    tenantId: string,
    namespace: string,
    items: NewEntry[],
    now: () => number,
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]> {
    return this.db.tx(async (c) => {
      const out: EntryRow[] = [];
      for (const item of items) {
        const row = await insertRow(c, tenantId, namespace, item, now());
        await insertNames(c, row, item.metadata);
        out.push(row);
      }
      if (also) await also(asTransaction(c));
      return out;
    });
  }

  hide(tenantId: string, namespace: string, key: string, at: number): Promise<Hidden | null> {
    return this.db.tx(async (c) => {
      const where = [tenantId, namespace, key];
      const k = (
        await c.query<{ live_id: number | null; hidden_through: number }>(
          'SELECT live_id, hidden_through FROM entry_keys WHERE tenant_id = $1 AND namespace = $2 AND key = $3 FOR UPDATE',
          where,
        )
      ).rows[0];
      if (!k || k.live_id === null) return null;
      const hidden = (
        await c.query<{ id: number; version: number }>(
          'SELECT id, version FROM entries WHERE tenant_id = $1 AND namespace = $2 AND key = $3 AND version > $4',
          [...where, k.hidden_through],
        )
      ).rows;
      const through = hidden.reduce((m, r) => Math.max(m, r.version), k.hidden_through);
      await c.query(
        'UPDATE entry_keys SET live_id = NULL, hidden_through = $4, hidden_at = $5 WHERE tenant_id = $1 AND namespace = $2 AND key = $3',
        [...where, through, at],
      );
      return { versions: hidden.length, removedIds: hidden.map((r) => r.id) };
    });
  }

  async stampDeleted(scope: KeyScope): Promise<void> {
    const keys =
      scope === 'all'
        ? await this.db.all<KeyToStamp>(
            'SELECT tenant_id, namespace, key, hidden_through, hidden_at FROM entry_keys WHERE hidden_at IS NOT NULL',
          )
        : await this.db.all<KeyToStamp>(
            `SELECT tenant_id, namespace, key, hidden_through, hidden_at FROM entry_keys
             WHERE tenant_id = $1 AND namespace = $2 AND key = $3 AND hidden_at IS NOT NULL`,
            [scope.tenantId, scope.namespace, scope.key],
          );
    for (const k of keys) {
      await this.db.tx(async (c) => {
        const where = [k.tenant_id, k.namespace, k.key];
        await c.query(
          `UPDATE entries SET deleted_at = $5
           WHERE tenant_id = $1 AND namespace = $2 AND key = $3 AND version <= $4 AND deleted_at IS NULL`,
          [...where, k.hidden_through, k.hidden_at],
        );
        // Done, unless another delete of the key started a stamping of its own meanwhile.
        await c.query('UPDATE entry_keys SET hidden_at = NULL WHERE tenant_id = $1 AND namespace = $2 AND key = $3 AND hidden_at = $4', [
          ...where,
          k.hidden_at,
        ]);
      });
    }
  }

  find(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow | undefined> {
    return version === undefined
      ? this.db.get<EntryRow>(
          `SELECT e.* FROM entry_keys k JOIN entries e ON e.id = k.live_id
           WHERE k.tenant_id = $1 AND k.namespace = $2 AND k.key = $3`,
          [tenantId, namespace, key],
        )
      : this.db.get<EntryRow>(
          `SELECT e.* FROM entries e JOIN entry_keys k ON k.tenant_id = e.tenant_id AND k.namespace = e.namespace AND k.key = e.key
           WHERE e.tenant_id = $1 AND e.namespace = $2 AND e.key = $3 AND e.version = $4 AND e.version > k.hidden_through
             AND e.deleted_at IS NULL`,
          [tenantId, namespace, key, version],
        );
  }

  async list(
    tenantId: string,
    namespace: string,
    prefix: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: ListRow[]; total: number }> {
    const where = 'k.tenant_id = $1 AND k.namespace = $2 AND k.live_id IS NOT NULL AND k.key >= $3 AND starts_with(k.key, $3)';
    const params = [tenantId, namespace, prefix];
    const [rows, count] = await Promise.all([
      this.db.all<ListRow>(
        `SELECT e.key, e.version, e.created_at, e.verdict, e.compressed, e.original_bytes, e.stored_core_bytes
         FROM entry_keys k JOIN entries e ON e.id = k.live_id
         WHERE ${where} ORDER BY k.key LIMIT $4 OFFSET $5`,
        [...params, limit, offset],
      ),
      this.db.get<{ total: number }>(`SELECT COUNT(*) AS total FROM entry_keys k WHERE ${where}`, params),
    ]);
    return { rows, total: count?.total ?? 0 };
  }

  /**
   * Rows (with their metadata, by cascade) in one statement; rows another node is purging at the same
   * time are skipped, so each is returned (and its blob removed) once.
   */
  async purge(scope: PurgeScope, limit: number): Promise<PurgedEntry[]> {
    // Writes commit whole here: there are never staged rows.
    if ('staged' in scope) return [];
    const [cond, arg] =
      'deletedBefore' in scope ? ['deleted_at IS NOT NULL AND deleted_at <= $1', scope.deletedBefore] : ['tenant_id = $1', scope.tenantId];
    return this.db.all<PurgedEntry>(
      `DELETE FROM entries e USING (SELECT id FROM entries WHERE ${cond} LIMIT $2 FOR UPDATE SKIP LOCKED) doomed
       WHERE e.id = doomed.id
       RETURNING e.id, e.blob_id, e.tenant_id, ${STORED_BYTES_SQL} AS bytes`,
      [arg, limit],
    );
  }

  async removeKeys(tenantId: string): Promise<void> {
    await this.db.run('DELETE FROM entry_keys WHERE tenant_id = $1', [tenantId]);
  }

  candidates(tenantId: string, namespace: string, like: Comparable, excludeKey: string | null, filters: Filters): Promise<CandidateRow[]> {
    const p = new Params();
    const sql = `SELECT e.id, e.key, e.norm, ${OPERAND_BYTES_SQL} AS bytes
       FROM entry_keys k JOIN entries e ON e.id = k.live_id
       WHERE k.tenant_id = ${p.add(tenantId)} AND k.namespace = ${p.add(namespace)} AND e.shape = ${p.add(like.shape)}
         AND e.layout = ${p.add(like.layout)} AND e.norm IS NOT NULL AND k.key IS DISTINCT FROM ${p.add(excludeKey)}
         AND ${matchCondition(filterPairs(filters), 'e.id', p)}
       ORDER BY k.key`;
    return this.db.all<CandidateRow>(sql, p.values);
  }

  storageRefs(tenantId: string, ids: number[]): Promise<StorageRef[]> {
    return this.db.all<StorageRef>(
      `SELECT id, key, blob_id, blob_kind, checksum, original_bytes, shape, layout, dtype, modes
       FROM entries WHERE tenant_id = $1 AND id = ANY($2::bigint[])`,
      [tenantId, ids],
    );
  }

  async searchMetadata(
    tenantId: string,
    namespace: string,
    filters: Filters,
    limit: number,
    offset: number,
  ): Promise<{ rows: SearchRow[]; total: number }> {
    const pairs = filterPairs(filters);
    const p = new Params();
    let matches: string;
    if (pairs.length === 0) {
      matches = `SELECT k.live_id AS id, k.key AS match_key FROM entry_keys k
                 WHERE k.tenant_id = ${p.add(tenantId)} AND k.namespace = ${p.add(namespace)} AND k.live_id IS NOT NULL`;
    } else {
      const [first, ...rest] = pairs as [[string, string], ...Array<[string, string]>];
      matches = `SELECT m0.entry_id AS id, m0.key AS match_key
                 FROM entry_metadata m0
                 JOIN entry_keys k ON k.tenant_id = m0.tenant_id AND k.namespace = m0.namespace AND k.key = m0.key
                 WHERE m0.tenant_id = ${p.add(tenantId)} AND m0.namespace = ${p.add(namespace)}
                   AND m0.name = ${p.add(first[0])} AND m0.value_json = ${p.add(first[1])}
                   AND k.live_id = m0.entry_id AND ${matchCondition(rest, 'm0.entry_id', p)}`;
    }
    const n = p.values.length;
    const [rows, count] = await Promise.all([
      this.db.all<SearchRow>(
        `SELECT e.key, e.version, e.metadata
         FROM (${matches} ORDER BY match_key LIMIT $${n + 1} OFFSET $${n + 2}) page JOIN entries e ON e.id = page.id
         ORDER BY page.match_key`,
        [...p.values, limit, offset],
      ),
      this.db.get<{ total: number }>(`SELECT COUNT(*) AS total FROM (${matches}) m`, p.values),
    ]);
    return { rows, total: count?.total ?? 0 };
  }
}

interface KeyToStamp {
  tenant_id: string;
  namespace: string;
  key: string;
  hidden_through: number;
  hidden_at: number;
}

/**
 * An entry's row, with the next version of its key: the UPSERT of the key row increments the counter
 * and holds the row's lock until commit, so a concurrent writer of the key waits and takes the next one.
 */
async function insertRow(c: PgTx, tenantId: string, namespace: string, item: NewEntry, createdAt: number): Promise<EntryRow> {
  const where = [tenantId, namespace, item.key];
  const { version } = (
    await c.query<{ version: number }>(
      `INSERT INTO entry_keys (tenant_id, namespace, key, last_version) VALUES ($1, $2, $3, 1)
       ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = entry_keys.last_version + 1
       RETURNING last_version AS version`,
      where,
    )
  ).rows[0]!;
  const full: Omit<EntryRow, 'id'> = {
    ...item.row,
    tenant_id: tenantId,
    namespace,
    key: item.key,
    version,
    created_at: createdAt,
    deleted_at: null,
  };
  const cols = Object.keys(full) as Array<keyof typeof full>;
  const { id } = (
    await c.query<{ id: number }>(
      `INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
      cols.map((col) => full[col]),
    )
  ).rows[0]!;
  await c.query('UPDATE entry_keys SET live_id = $4 WHERE tenant_id = $1 AND namespace = $2 AND key = $3', [...where, id]);
  return { ...full, id };
}

/** Add an entry's top-level metadata values (canonical JSON) to the index, in one statement. */
async function insertNames(c: PgTx, row: EntryRow, metadata: Record<string, unknown>): Promise<void> {
  const names = Object.keys(metadata);
  if (names.length === 0) return;
  await c.query(
    `INSERT INTO entry_metadata (entry_id, tenant_id, namespace, key, version, name, value_json)
     SELECT $1, $2, $3, $4, $5, n, v FROM unnest($6::text[], $7::text[]) AS t (n, v)`,
    [row.id, row.tenant_id, row.namespace, row.key, row.version, names, names.map((n) => canonicalJson(metadata[n]))],
  );
}

/** An SQL condition: the entry whose id is `idColumn` matches every pair (one primary-key probe each). */
function matchCondition(pairs: Array<[string, string]>, idColumn: string, p: Params): string {
  const sql = pairs
    .map(
      ([name, value]) =>
        `EXISTS (SELECT 1 FROM entry_metadata m WHERE m.entry_id = ${idColumn} AND m.name = ${p.add(name)} AND m.value_json = ${p.add(value)})`,
    )
    .join(' AND ');
  return sql || 'TRUE';
}
