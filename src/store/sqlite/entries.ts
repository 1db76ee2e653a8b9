// Entries over SQLite: versions per (tenant, namespace, key) in `entries`, the key rows (version
// counter, live version, what a delete hid) in `entry_keys`, the metadata index in `entry_metadata`.
//
// Writes stay within the writer's budget per transaction (db.ts, CONTRACT.md section 8): the rows of
// a write too large for one transaction are written in pieces (write-pieces.ts), invisible (listed in
// entry_staged), and one small final transaction makes them all visible; a failure removes them, a
// crash leaves them for the next start's purge of { staged } to remove. A tenant's writes run in that
// tenant's writer lane.
import type { Filters } from '../filters.js';
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
import { STORED_BYTES_SQL } from '../sql.js';
import type { StoreLogger } from '../stores.js';
import type { Transaction } from '../transaction.js';
import { listCandidates, searchMetadata, storageRefs } from './candidates.js';
import { asTransaction, type Database, type Tx } from './db.js';
import { chunksByCost, nameCost, piecesOf, publishCost, rowCost, type Chunk, type Piece } from './write-pieces.js';

const KEY_ROWS_PER_TX = 1024;

/** The writer lane of a tenant's writes (db.ts: lanes take turns). */
const laneOf = (tenantId: string): string => `tenant:${tenantId}`;

/** SQL: the `entries` row under `alias` is not one of a write still in progress (entry_staged). */
const notStaged = (alias: string): string => `NOT EXISTS (SELECT 1 FROM entry_staged s WHERE s.id = ${alias}.id)`;

export class SqliteEntryStore implements EntryStore, EntrySearch {
  // One process owns the file: the service's ledger in memory sees every write.
  readonly shared = false;

  constructor(
    private readonly db: Database,
    private readonly log: StoreLogger = { error() {} },
  ) {}

  holdStorage(h: StorageHold, now: number): Promise<string | null> {
    // The single writer decides holds one at a time, across every connection to the file.
    return this.db.write(async (tx) => {
      await tx.run('DELETE FROM storage_holds WHERE tenant_id = ? AND expires_at <= ?', [h.tenantId, now]);
      const r = await tx.run(
        `INSERT INTO storage_holds (tenant_id, bytes, expires_at)
         SELECT ?1, ?2, ?3
         WHERE (SELECT COALESCE(SUM(${STORED_BYTES_SQL}), 0) FROM entries WHERE tenant_id = ?1)
             + (SELECT COALESCE(SUM(bytes), 0) FROM storage_holds WHERE tenant_id = ?1)
             + ?2 <= ?4`,
        [h.tenantId, h.bytes, h.expiresAt, h.quotaBytes],
      );
      return r.changes === 1 ? String(r.lastID) : null;
    });
  }

  async unholdStorage(id: string): Promise<void> {
    await this.db.write((tx) => tx.run('DELETE FROM storage_holds WHERE id = ?', [Number(id)]));
  }

  async storedBytesOfTenant(tenantId: string): Promise<number> {
    const row = await this.db.get<{ bytes: number | null }>(`SELECT SUM(${STORED_BYTES_SQL}) AS bytes FROM entries WHERE tenant_id = ?`, [
      tenantId,
    ]);
    return row?.bytes ?? 0;
  }

  async storedBytesByTenant(): Promise<Array<{ tenantId: string; bytes: number }>> {
    const rows = await this.db.all<{ tenant_id: string; bytes: number }>(
      `SELECT tenant_id, SUM(${STORED_BYTES_SQL}) AS bytes FROM entries GROUP BY tenant_id`,
    );
    return rows.map((r) => ({ tenantId: r.tenant_id, bytes: r.bytes }));
  }

  async blobIds(): Promise<Set<string>> {
    return new Set((await this.db.all<{ blob_id: string }>('SELECT blob_id FROM entries')).map((r) => r.blob_id));
  }

  /**
   * The rows of `items`, visible all at once. Within the writer's budget: one transaction. Beyond it
   * (write-pieces.ts): pieces of invisible rows in transactions of their own, then one transaction
   * that makes them all visible (and runs `also`); when a step fails, what was written is removed.
   */
  async insert(
    tenantId: string,
    namespace: string,
    items: NewEntry[],
    now: () => number,
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]> {
    const lane = laneOf(tenantId);
    const chunks = chunksByCost(piecesOf(items.map((it) => ({ metadata: it.metadata, metadataText: it.row.metadata }))), (p) => p.cost);
    const first = chunks.next();
    const second = first.done ? first : chunks.next();
    if (first.done || second.done) {
      const only = first.done ? { items: [], cost: 1 } : first.value;
      return this.db.write(
        async (tx) => {
          const out: EntryRow[] = [];
          for (const p of only.items) {
            if (p.first) out.push(await insertRow(tx, tenantId, namespace, items[p.index]!, now(), false));
            await insertNames(tx, out[p.index]!, p.values);
          }
          if (also) await also(asTransaction(tx));
          return out;
        },
        { lane, cost: only.cost },
      );
    }
    // rows[i] is the row of items[i] (pieces keep the items' order), once its transaction committed.
    const rows: EntryRow[] = [];
    // Pieces are not durable on their own (a power loss loses only invisible rows); the fsync of the
    // transaction that makes them visible covers them.
    const stage = async (chunk: Chunk<Piece>) => {
      rows.push(
        ...(await this.db.write(
          async (tx) => {
            const made: EntryRow[] = [];
            for (const p of chunk.items) {
              if (p.first) made.push(await insertRow(tx, tenantId, namespace, items[p.index]!, now(), true));
              await insertNames(tx, rows[p.index] ?? made.at(-1)!, p.values);
            }
            return made;
          },
          { lane, cost: chunk.cost, durable: false },
        )),
      );
    };
    try {
      await stage(first.value);
      await stage(second.value);
      for (const chunk of chunks) await stage(chunk);
      await this.db.write(
        async (tx) => {
          await publish(tx, rows);
          if (also) await also(asTransaction(tx));
        },
        { lane, cost: publishCost(rows.length) },
      );
      return rows;
    } catch (err) {
      await this.removeRows(
        rows.map((r) => ({ id: r.id, metadataBytes: Buffer.byteLength(r.metadata) })),
        lane,
      ).catch((e: unknown) => this.log.error({ err: e }, 'could not remove the rows of a failed write; start() will'));
      throw err;
    }
  }

  /**
   * One small transaction hides them (the key row: no live version, versions up to hidden_through
   * hidden); stamping each row's deleted_at follows in stampDeleted.
   */
  hide(tenantId: string, namespace: string, key: string, at: number): Promise<Hidden | null> {
    return this.db.write(
      async (tx) => {
        const k = await tx.get<{ live_id: number | null; hidden_through: number }>(
          'SELECT live_id, hidden_through FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?',
          [tenantId, namespace, key],
        );
        if (!k || k.live_id === null) return null;
        // The visible versions: above the last delete's hidden_through, not staged. Read from the
        // (key, version) index alone: a row's deleted_at sits behind its metadata's overflow pages.
        // Rows of a write in progress with a higher version become visible after this delete; those
        // below are hidden with the rest.
        const hidden = await tx.all<{ id: number; version: number }>(
          `SELECT id, version FROM entries e WHERE tenant_id = ? AND namespace = ? AND key = ? AND version > ? AND ${notStaged('e')}`,
          [tenantId, namespace, key, k.hidden_through],
        );
        const through = hidden.reduce((m, r) => Math.max(m, r.version), k.hidden_through);
        await tx.run(
          'UPDATE entry_keys SET live_id = NULL, hidden_through = ?, hidden_at = ? WHERE tenant_id = ? AND namespace = ? AND key = ?',
          [through, at, tenantId, namespace, key],
        );
        return { versions: hidden.length, removedIds: hidden.map((r) => r.id) };
      },
      { lane: laneOf(tenantId), cost: 2 },
    );
  }

  /**
   * Stamp deleted_at (the key's hidden_at) on the rows a delete hid, for the keys of `scope` whose
   * stamping is unfinished (hidden_at set), in transactions within the writer's budget (rewriting a
   * row costs its pages); a key whose rows are all stamped is marked done.
   */
  async stampDeleted(scope: KeyScope): Promise<void> {
    const [cond, params, lane] =
      scope === 'all'
        ? ['1', [], '']
        : ['k.tenant_id = ? AND k.namespace = ? AND k.key = ?', [scope.tenantId, scope.namespace, scope.key], laneOf(scope.tenantId)];
    const keys = await this.db.all<{ tenant_id: string; namespace: string; key: string; hidden_through: number; hidden_at: number }>(
      `SELECT tenant_id, namespace, key, hidden_through, hidden_at FROM entry_keys k WHERE ${cond} AND hidden_at IS NOT NULL`,
      params,
    );
    for (const k of keys) {
      const where = [k.tenant_id, k.namespace, k.key];
      const rows = await this.db.all<{ id: number; metadataBytes: number }>(
        `SELECT id, length(CAST(metadata AS BLOB)) AS metadataBytes FROM entries
         WHERE tenant_id = ? AND namespace = ? AND key = ? AND version <= ? AND deleted_at IS NULL`,
        [...where, k.hidden_through],
      );
      for (const chunk of chunksByCost(rows, (r) => rowCost(r.metadataBytes))) {
        await this.db.write(
          async (tx) => {
            for (const r of chunk.items)
              await tx.run('UPDATE entries SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL', [k.hidden_at, r.id]);
          },
          { lane, cost: chunk.cost },
        );
      }
      // Done, unless another delete of the key started a stamping of its own meanwhile.
      await this.db.write(
        (tx) =>
          tx.run('UPDATE entry_keys SET hidden_at = NULL WHERE tenant_id = ? AND namespace = ? AND key = ? AND hidden_at = ?', [
            ...where,
            k.hidden_at,
          ]),
        { lane },
      );
    }
  }

  find(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow | undefined> {
    return version === undefined
      ? this.db.get<EntryRow>(
          `SELECT e.* FROM entry_keys k JOIN entries e ON e.id = k.live_id
         WHERE k.tenant_id = ? AND k.namespace = ? AND k.key = ?`,
          [tenantId, namespace, key],
        )
      : this.db.get<EntryRow>(
          `SELECT e.* FROM entries e JOIN entry_keys k ON k.tenant_id = e.tenant_id AND k.namespace = e.namespace AND k.key = e.key
         WHERE e.tenant_id = ? AND e.namespace = ? AND e.key = ? AND e.version = ? AND e.version > k.hidden_through
           AND e.deleted_at IS NULL AND ${notStaged('e')}`,
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
    const where = `k.tenant_id = $tenant AND k.namespace = $ns AND k.live_id IS NOT NULL AND k.key >= $prefix AND k.key GLOB $glob`;
    const params = { $tenant: tenantId, $ns: namespace, $prefix: prefix, $glob: globPrefix(prefix) };
    const rows = await this.db.all<ListRow & { total: number }>(
      `SELECT e.key, e.version, e.created_at, e.verdict, e.compressed, e.original_bytes, e.stored_core_bytes,
              (SELECT COUNT(*) FROM entry_keys k WHERE ${where}) AS total
       FROM entry_keys k JOIN entries e ON e.id = k.live_id
       WHERE ${where}
       ORDER BY k.key LIMIT $limit OFFSET $offset`,
      { ...params, $limit: limit, $offset: offset },
    );
    if (rows.length > 0) return { rows, total: rows[0]!.total };
    const c = await this.db.get<{ total: number }>(`SELECT COUNT(*) AS total FROM entry_keys k WHERE ${where}`, params);
    return { rows: [], total: c?.total ?? 0 };
  }

  /** Rows first (each transaction within the writer's budget); the caller removes the blobs after. */
  async purge(scope: PurgeScope, limit: number): Promise<PurgedEntry[]> {
    const [cond, params] =
      'staged' in scope
        ? ['id IN (SELECT id FROM entry_staged)', []]
        : 'deletedBefore' in scope
          ? ['deleted_at IS NOT NULL AND deleted_at <= ?', [scope.deletedBefore]]
          : ['tenant_id = ?', [scope.tenantId]];
    const rows = await this.db.all<PurgedEntry & { metadataBytes: number }>(
      `SELECT id, blob_id, tenant_id, ${STORED_BYTES_SQL} AS bytes, length(CAST(metadata AS BLOB)) AS metadataBytes
       FROM entries WHERE ${cond} LIMIT ${limit}`,
      params,
    );
    if (rows.length > 0) await this.removeRows(rows, '');
    return rows.map(({ id, blob_id, tenant_id, bytes }) => ({ id, blob_id, tenant_id, bytes }));
  }

  async removeKeys(tenantId: string): Promise<void> {
    // Key rows are small and neighbours: KEY_ROWS_PER_TX of them a transaction (a tenant may hold millions).
    for (let changes = KEY_ROWS_PER_TX; changes === KEY_ROWS_PER_TX;) {
      ({ changes } = await this.db.write(
        (tx) =>
          tx.run(
            `DELETE FROM entry_keys WHERE (tenant_id, namespace, key) IN
           (SELECT tenant_id, namespace, key FROM entry_keys WHERE tenant_id = ? LIMIT ${KEY_ROWS_PER_TX})`,
            [tenantId],
          ),
        { lane: laneOf(tenantId), cost: KEY_ROWS_PER_TX / 16 },
      ));
    }
  }

  candidates(tenantId: string, namespace: string, like: Comparable, excludeKey: string | null, filters: Filters): Promise<CandidateRow[]> {
    return listCandidates(this.db, tenantId, namespace, like, excludeKey, filters);
  }

  storageRefs(tenantId: string, ids: number[]): Promise<StorageRef[]> {
    return storageRefs(this.db, tenantId, ids);
  }

  searchMetadata(
    tenantId: string,
    namespace: string,
    filters: Filters,
    limit: number,
    offset: number,
  ): Promise<{ rows: SearchRow[]; total: number }> {
    return searchMetadata(this.db, tenantId, namespace, filters, limit, offset);
  }

  /**
   * Delete entry rows with their metadata and staged marks, every transaction within the writer's
   * budget: the metadata names first (in pieces, as they were written), then the rows.
   */
  private async removeRows(rows: Array<{ id: number; metadataBytes: number }>, lane: string): Promise<void> {
    for (const chunk of chunksByCost(rows, (r) => rowCost(r.metadataBytes))) {
      const ids = JSON.stringify(chunk.items.map((r) => r.id));
      const names = await this.db.all<{ entry_id: number; name: string; bytes: number }>(
        `SELECT entry_id, name, length(CAST(name AS BLOB)) + length(CAST(value_json AS BLOB)) AS bytes
         FROM entry_metadata WHERE entry_id IN (SELECT value FROM json_each(?))`,
        [ids],
      );
      for (const piece of chunksByCost(names, (n) => nameCost(n.bytes))) {
        await this.db.write(
          (tx) =>
            tx.run('DELETE FROM entry_metadata WHERE (entry_id, name) IN (SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j)', [
              JSON.stringify(piece.items.map((n) => [n.entry_id, n.name])),
            ]),
          { lane, cost: piece.cost },
        );
      }
      await this.db.write(
        async (tx) => {
          await tx.run('UPDATE entry_keys SET live_id = NULL WHERE live_id IN (SELECT value FROM json_each(?))', [ids]);
          await tx.run('DELETE FROM entry_staged WHERE id IN (SELECT value FROM json_each(?))', [ids]);
          await tx.run('DELETE FROM entries WHERE id IN (SELECT value FROM json_each(?))', [ids]);
        },
        { lane, cost: chunk.cost },
      );
    }
  }
}

/**
 * An entry's row and key row (its metadata names go in with insertNames). A `staged` row takes its
 * version number now (so no other write can take it) but stays invisible: the key's live version
 * is left as it is and the row is listed in entry_staged.
 */
async function insertRow(
  tx: Tx,
  tenantId: string,
  namespace: string,
  item: NewEntry,
  createdAt: number,
  staged: boolean,
): Promise<EntryRow> {
  const { key, row } = item;
  const k = await tx.get<{ last_version: number }>(
    'SELECT last_version FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?',
    [tenantId, namespace, key],
  );
  const version = (k?.last_version ?? 0) + 1;
  const full: Omit<EntryRow, 'id'> = { ...row, tenant_id: tenantId, namespace, key, version, created_at: createdAt, deleted_at: null };
  const cols = Object.keys(full) as Array<keyof typeof full>;
  const { lastID } = await tx.run(
    `INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    cols.map((c) => full[c] as string | number | null),
  );
  if (staged) {
    await tx.run(
      `INSERT INTO entry_keys (tenant_id, namespace, key, last_version, live_id) VALUES (?, ?, ?, ?, NULL)
       ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = excluded.last_version`,
      [tenantId, namespace, key, version],
    );
    await tx.run('INSERT INTO entry_staged (id) VALUES (?)', [lastID]);
  } else {
    await tx.run(
      `INSERT INTO entry_keys (tenant_id, namespace, key, last_version, live_id) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = excluded.last_version, live_id = excluded.live_id`,
      [tenantId, namespace, key, version, lastID],
    );
  }
  return { ...full, id: lastID };
}

/**
 * Make staged rows visible: drop their staged marks, and make each key's newest staged version its
 * live one unless a newer version became live meanwhile (that write came after this one) or a
 * delete hid it (a newer version was deleted, so this one came before that delete). Two
 * statements, each a lookup by primary key per row, whatever the size of the namespace.
 */
async function publish(tx: Tx, rows: EntryRow[]): Promise<void> {
  await tx.run('DELETE FROM entry_staged WHERE id IN (SELECT value FROM json_each(?))', [JSON.stringify(rows.map((r) => r.id))]);
  const newest = new Map<string, EntryRow>();
  for (const r of rows) if ((newest.get(r.key)?.version ?? 0) < r.version) newest.set(r.key, r);
  await tx.run(
    `UPDATE entry_keys SET live_id = e.id
     FROM entries e
     WHERE e.id IN (SELECT value FROM json_each(?))
       AND entry_keys.tenant_id = e.tenant_id AND entry_keys.namespace = e.namespace AND entry_keys.key = e.key
       AND e.version > entry_keys.hidden_through
       AND (entry_keys.live_id IS NULL OR (SELECT x.version FROM entries x WHERE x.id = entry_keys.live_id) < e.version)`,
    [JSON.stringify([...newest.values()].map((r) => r.id))],
  );
}

/** Add metadata names of an entry to the index: one statement for all, {name: canonical JSON} unpacked by json_each. */
async function insertNames(tx: Tx, row: EntryRow, values: Piece['values']): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await tx.run(
    `INSERT INTO entry_metadata (entry_id, tenant_id, namespace, key, version, name, value_json)
     SELECT ?, ?, ?, ?, ?, j.key, j.value FROM json_each(?) j`,
    [row.id, row.tenant_id, row.namespace, row.key, row.version, JSON.stringify(values)],
  );
}

/** A GLOB pattern matching exactly the strings that start with `prefix` (metacharacters escaped). */
export function globPrefix(prefix: string): string {
  return prefix.replace(/[*?[]/g, (c) => `[${c}]`) + '*';
}
