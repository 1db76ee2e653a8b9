// Entries over PostgreSQL: the same tables as on SQLite (entries, entry_keys, entry_metadata). A write
// of any size is one transaction: its key rows are locked by the UPSERT that takes each version
// number, so versions are unique and gap-free per key whichever node writes (a rollback returns the
// number), and its rows become visible together when it commits.
import type {
  CandidateRow,
  Comparable,
  EntryRow,
  EntrySearch,
  EntryStore,
  Hidden,
  KeyScope,
  ListRow,
  NewEntry,
  PurgedEntry,
  PurgeScope,
  SearchRow,
  StorageHold,
  StorageRef,
} from '../entries.js';
import { canonicalJson, filterPairs, type Filters } from '../filters.js';
import { metadataMatchSql, OPERAND_BYTES_SQL, STORED_BYTES_SQL } from '../sql.js';
import type { Transaction } from '../transaction.js';
import { asTransaction, lockFor, type PgDatabase, type PgTx } from './db.js';

/** Numbered parameters ($1, $2, ...) of one statement, in the order they are added. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

export class PgEntryStore implements EntryStore, EntrySearch {
  readonly shared = true;

  constructor(private readonly db: PgDatabase) {}

  async holdStorage(h: StorageHold, now: number): Promise<string | null> {
    return this.db.tx(async (c) => {
      // Holds of one tenant are decided one at a time, across every node.
      await lockFor(c, 'storage', h.tenantId);
      await c.query('DELETE FROM storage_holds WHERE tenant_id = $1 AND expires_at <= $2', [h.tenantId, now]);
      const res = await c.query<{ id: string }>(
        `INSERT INTO storage_holds (tenant_id, bytes, expires_at)
         SELECT $1::text, $2::bigint, $3::double precision
         WHERE (SELECT COALESCE(SUM(bytes), 0) FROM entry_storage WHERE tenant_id = $1)
             + (SELECT COALESCE(SUM(bytes), 0) FROM storage_holds WHERE tenant_id = $1)
             + $2::bigint <= $4::bigint
         RETURNING id`,
        [h.tenantId, h.bytes, h.expiresAt, h.quotaBytes],
      );
      return res.rows[0] ? String(res.rows[0].id) : null;
    });
  }

  async unholdStorage(id: string): Promise<void> {
    await this.db.run('DELETE FROM storage_holds WHERE id = $1', [id]);
  }

  async storedBytesByTenant(): Promise<Array<{ tenantId: string; bytes: number }>> {
    const rows = await this.db.all<{ tenant_id: string; bytes: string | number }>(
      'SELECT tenant_id, bytes FROM entry_storage WHERE bytes > 0',
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, bytes: Number(r.bytes) }));
  }

  async storedBytesOfTenant(tenantId: string): Promise<number> {
    const row = await this.db.get<{ bytes: string | number }>('SELECT bytes FROM entry_storage WHERE tenant_id = $1', [tenantId]);
    return Number(row?.bytes ?? 0);
  }

  async blobIds(): Promise<Set<string>> {
    return new Set((await this.db.all<{ blob_id: string }>('SELECT blob_id FROM entries')).map((r) => r.blob_id));
  }

  /**
   * Four statements whatever the number of items: the key rows first, in key order (so two writes
   * lock shared keys in the same order), each counter raised by its key's items at once; then every
   * row, the live versions, and the metadata index.
   */
  insert(
    tenantId: string,
    namespace: string,
    items: NewEntry[],
    now: () => number,
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]> {
    return this.db.tx(async (c) => {
      const out = items.length > 0 ? await insertRows(c, tenantId, namespace, items, now()) : [];
      if (also) await also(asTransaction(c));
      // Last, so the tenant's counter row is locked only for the commit that follows.
      if (out.length > 0) {
        await c.query(
          `INSERT INTO entry_storage (tenant_id, bytes)
           SELECT tenant_id, SUM(${STORED_BYTES_SQL}) FROM entries WHERE id = ANY($1::bigint[]) GROUP BY tenant_id
           ON CONFLICT (tenant_id) DO UPDATE SET bytes = entry_storage.bytes + excluded.bytes`,
          [out.map((r) => r.id)],
        );
      }
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
    // One statement: the rows go and their bytes leave the tenants' counters together.
    return this.db.all<PurgedEntry>(
      `WITH gone AS (
         DELETE FROM entries e USING (SELECT id FROM entries WHERE ${cond} LIMIT $2 FOR UPDATE SKIP LOCKED) doomed
         WHERE e.id = doomed.id
         RETURNING e.id, e.blob_id, e.tenant_id, ${STORED_BYTES_SQL} AS bytes
       ), counted AS (
         UPDATE entry_storage s SET bytes = s.bytes - g.bytes
         FROM (SELECT tenant_id, SUM(bytes) AS bytes FROM gone GROUP BY tenant_id) g
         WHERE s.tenant_id = g.tenant_id
       )
       SELECT id, blob_id, tenant_id, bytes FROM gone`,
      [arg, limit],
    );
  }

  async removeKeys(tenantId: string): Promise<void> {
    await this.db.run('DELETE FROM entry_keys WHERE tenant_id = $1', [tenantId]);
  }

  candidates(tenantId: string, namespace: string, like: Comparable, excludeKey: string | null, filters: Filters): Promise<CandidateRow[]> {
    const p = new Params();
    const sql = `SELECT e.id, e.key, e.norm, ${OPERAND_BYTES_SQL} AS bytes, e.layout
       FROM entry_keys k JOIN entries e ON e.id = k.live_id
       WHERE k.tenant_id = ${p.add(tenantId)} AND k.namespace = ${p.add(namespace)} AND e.shape = ${p.add(like.shape)}
         AND e.norm IS NOT NULL AND k.key IS DISTINCT FROM ${p.add(excludeKey)}
         AND ${metadataMatchSql(filterPairs(filters), 'e.id', (v) => p.add(v))}
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
                   AND k.live_id = m0.entry_id AND ${metadataMatchSql(rest, 'm0.entry_id', (v) => p.add(v))}`;
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
 * The rows of `items`, numbered: the UPSERT of each key row raises its counter by the key's items
 * and holds the row's lock until commit, so a concurrent writer of the key waits and numbers after.
 */
async function insertRows(c: PgTx, tenantId: string, namespace: string, items: NewEntry[], createdAt: number): Promise<EntryRow[]> {
  const counts = new Map<string, number>();
  for (const it of items) counts.set(it.key, (counts.get(it.key) ?? 0) + 1);
  const keys = [...counts.keys()].sort();
  const tops = await c.query<{ key: string; last_version: number }>(
    `INSERT INTO entry_keys (tenant_id, namespace, key, last_version)
     SELECT $1, $2, k, n FROM unnest($3::text[], $4::int[]) WITH ORDINALITY AS t (k, n, i) ORDER BY i
     ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = entry_keys.last_version + excluded.last_version
     RETURNING key, last_version`,
    [tenantId, namespace, keys, keys.map((k) => counts.get(k)!)],
  );
  // The first version each key's items take, in the order they come.
  const next = new Map(tops.rows.map((r) => [r.key, r.last_version - counts.get(r.key)! + 1]));
  const rows: Array<Omit<EntryRow, 'id'>> = items.map((it) => {
    const version = next.get(it.key)!;
    next.set(it.key, version + 1);
    return { ...it.row, tenant_id: tenantId, namespace, key: it.key, version, created_at: createdAt, deleted_at: null };
  });
  const cols = Object.keys(rows[0]!) as Array<keyof (typeof rows)[number]>;
  // Typed by the table's own row type, so no column's type is written twice.
  const ids = await c.query<{ id: number; key: string; version: number }>(
    `INSERT INTO entries (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM json_populate_recordset(NULL::entries, $1::json)
     RETURNING id, key, version`,
    [JSON.stringify(rows, finiteOrText)],
  );
  const idOf = new Map(ids.rows.map((r) => [`${r.version}:${r.key}`, r.id]));
  const out = rows.map((r) => ({ ...r, id: idOf.get(`${r.version}:${r.key}`)! }));
  // Each key's newest row is its live one (the lock taken above keeps any other write of the key out).
  await c.query(
    `UPDATE entry_keys k SET live_id = e.id FROM entries e
     WHERE e.id = ANY($1::bigint[]) AND k.tenant_id = e.tenant_id AND k.namespace = e.namespace AND k.key = e.key
       AND e.version = k.last_version`,
    [out.map((r) => r.id)],
  );
  await insertNames(c, out, items);
  return out;
}

/** Add the entries' top-level metadata values (canonical JSON) to the index, in one statement. */
async function insertNames(c: PgTx, rows: EntryRow[], items: NewEntry[]): Promise<void> {
  const ids: number[] = [];
  const names: string[] = [];
  const values: string[] = [];
  rows.forEach((row, i) => {
    const metadata = items[i]!.metadata;
    for (const name of Object.keys(metadata)) {
      ids.push(row.id);
      names.push(name);
      values.push(canonicalJson(metadata[name]));
    }
  });
  if (ids.length === 0) return;
  await c.query(
    `INSERT INTO entry_metadata (entry_id, tenant_id, namespace, key, version, name, value_json)
     SELECT e.id, e.tenant_id, e.namespace, e.key, e.version, t.n, t.v
     FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t (id, n, v) JOIN entries e ON e.id = t.id`,
    [ids, names, values],
  );
}

/** JSON has no NaN or infinities: they travel as text, which a float column reads back as the same value. */
const finiteOrText = (_key: string, v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);
