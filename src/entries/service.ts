// Entries: versioning per (tenant, namespace, key), the write path (Oracle -> blob -> row), reads,
// soft delete, list, and compaction of tombstones. The write order is what makes a crash harmless:
// the blob is durable before the row that names it commits, so at worst a blob has no row (swept at
// start), never a row without its blob.
//
// Writes stay within the writer's budget per transaction (store/db.ts, CONTRACT.md section 8): the
// rows of a write too large for one transaction are written in pieces (write-pieces.ts), invisible
// (listed in entry_staged), and one small final transaction makes them all visible; a failure removes
// them, a crash leaves them for start() to remove. A tenant's writes run in that tenant's writer lane.
import type { Database, Tx } from '../store/db.js';
import { BlobStore, corrupted, type BlobRef } from '../store/blobs.js';
import { coreBytes, coreDtypeOf, decodeCores, encodeCores } from '../store/cores.js';
import { notFound } from '../http/errors.js';
import { ITEM_SIZE, type DType, type Engine, type LayoutName, type TensorTrain } from '../engine/types.js';
import type { Payload } from '../codec/payload.js';
import { chooseRepresentation, ZERO_FINGERPRINT, type Target } from './oracle.js';
import { type EntryRow, type ListRow, shapeOf } from './entry.js';
import { denseNorm } from './norm.js';
import { EngineAdmission, SERVER_TURN, type Turn } from '../admission/engine-admission.js';
import { RowCache } from './row-cache.js';
import { chunksByCost, nameCost, piecesOf, publishCost, rowCost, type Chunk, type Piece } from './write-pieces.js';
import { StorageLedger, storedBytesOf, STORED_BYTES_SQL, type StorageQuotaOf, type StorageReservation } from './storage-quota.js';

export interface EntryLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EntryServiceOptions {
  db: Database;
  blobs: BlobStore;
  engine: Engine;
  compressionThresholdBytes: number;
  retentionDays: number;
  log: EntryLogger;
  /** Unix seconds (fractional); tests move the clock. */
  now?: () => number;
  /** Engine work (compress, reconstruct) in fair turns across tenants; default: its own, ENGINE_SLOTS slots. */
  admission?: EngineAdmission;
  /** Entry rows kept in memory for get/serve (0: none). Default 20000. */
  rowCacheRows?: number;
  /** Each tenant's storage quota in bytes (null: unlimited). Default: unlimited for everyone. */
  storageQuota?: StorageQuotaOf;
}

export interface PutInput {
  tenantId: string;
  namespace: string;
  key: string;
  payload: Payload;
  metadata: Record<string, unknown>;
  target: Target;
  /** Whose turn the engine work takes (default: the tenant's; a put without a tenant: the server's). */
  turn?: Turn;
}

/** A validated put_cores entry. */
export interface CoresInput {
  key: string;
  tt: TensorTrain;
  shape: number[];
  dtype: DType;
  layout: LayoutName;
  metadata: Record<string, unknown>;
  domain: string;
}

/** What a committed write, delete or purge changed: one key, or (no namespace/key) a whole tenant. */
export interface EntryChange {
  tenantId: string;
  namespace?: string;
  key?: string;
  /** Entry ids (versions) that can no longer be read: a delete's versions, a purged tenant's entries. */
  removedIds?: number[];
}

/** The columns readCores and readDense need. */
export type StoredRef = Pick<EntryRow, 'blob_id' | 'blob_kind' | 'checksum' | 'original_bytes' | 'shape' | 'layout' | 'dtype'>;

type NewRow = Omit<EntryRow, 'id' | 'version' | 'created_at' | 'deleted_at' | 'tenant_id' | 'namespace' | 'key'>;

/** A put whose blob is durable but whose row is not committed yet (EntryService.prepare). */
export interface PreparedEntry {
  key: string;
  row: NewRow;
  metadata: Record<string, unknown>;
  blob: BlobRef;
  /** Its stored bytes held against the tenant's storage quota (null: held by the caller's reservation). */
  reservation: StorageReservation | null;
}

const HOUR_MS = 3600_000;
const PURGE_BATCH = 500;
const KEY_ROWS_PER_TX = 1024;
/** The writer lane of a tenant's writes (store/db.ts: lanes take turns). */
const laneOf = (tenantId: string): string => `tenant:${tenantId}`;

/** SQL: the `entries` row under `alias` is not one of a write still in progress (entry_staged). */
const notStaged = (alias: string): string => `NOT EXISTS (SELECT 1 FROM entry_staged s WHERE s.id = ${alias}.id)`;

export class EntryService {
  readonly db: Database;
  readonly blobs: BlobStore;
  readonly engine: Engine;
  private readonly opts: EntryServiceOptions;
  private readonly now: () => number;
  private readonly admission: EngineAdmission;
  private timer: NodeJS.Timeout | null = null;
  private compacting: Promise<number> | null = null;
  private readonly cache: RowCache;
  private readonly listeners: Array<(change: EntryChange) => void> = [];
  /** Stored and reserved bytes per tenant, against the storage quota. */
  readonly storage: StorageLedger;

  constructor(opts: EntryServiceOptions) {
    this.opts = opts;
    this.db = opts.db;
    this.blobs = opts.blobs;
    this.engine = opts.engine;
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.admission = opts.admission ?? new EngineAdmission();
    this.cache = new RowCache(opts.rowCacheRows ?? 20000);
    this.storage = new StorageLedger(opts.storageQuota);
  }

  /**
   * Start-up work, before the server listens: sum the stored bytes, remove the invisible rows of
   * writes a crash interrupted, finish the stamping of deletes it interrupted, remove orphan blobs and
   * temp files, purge expired tombstones, and schedule compaction hourly (the timer does not keep the
   * process alive).
   */
  async start(): Promise<void> {
    await this.storage.load(this.db);
    const unfinished = await this.purgeWhere('id IN (SELECT id FROM entry_staged)', []);
    if (unfinished > 0) this.opts.log.info({ entries: unfinished }, 'removed the rows of writes interrupted by a stop');
    await this.stampDeleted('1', [], '');
    const live = new Set((await this.db.all<{ blob_id: string }>('SELECT blob_id FROM entries')).map((r) => r.blob_id));
    const swept = await this.blobs.sweep((id) => live.has(id));
    if (swept.orphans > 0 || swept.temps > 0) this.opts.log.info(swept, 'removed orphan blobs and temp files');
    await this.compact();
    this.timer = setInterval(() => {
      this.compact().catch((err) => this.opts.log.error({ err }, 'compaction failed'));
    }, HOUR_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * Call `listener` after every committed change of what a key holds (put, put_cores, delete) and
   * after a tenant purge; caches of derived data (the query feature's decoded cores) drop theirs.
   */
  onChange(listener: (change: EntryChange) => void): void {
    this.listeners.push(listener);
  }

  private emit(change: EntryChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (err) {
        this.opts.log.error({ err }, 'entry change listener failed');
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /** Compress (or not) as the Oracle decides, store durably, and return the committed row. */
  async put(input: PutInput): Promise<EntryRow> {
    const prepared = await this.prepare({ ...input, turn: input.turn ?? { owner: input.tenantId } });
    const [committed] = await this.commitPrepared(input.tenantId, input.namespace, [prepared]);
    return committed!;
  }

  /**
   * put's first half: the Oracle's representation and its durable blob, not yet visible to any read,
   * its stored bytes reserved against the tenant's storage quota (402 storage_quota_exceeded before
   * the blob is written when they do not fit). commitPrepared makes a batch visible at once; discard
   * removes the blobs and frees the bytes (a crash in between leaves orphan blobs, which start() sweeps).
   */
  async prepare(input: Omit<PutInput, 'namespace'>): Promise<PreparedEntry> {
    const { payload, target, tenantId } = input;
    const turn = input.turn ?? SERVER_TURN;
    // A tenant already at its quota is refused before the engine works: a non-empty entry stores bytes.
    if (payload.data.length > 0) this.storage.check(tenantId, 1);
    const shapeLayout = layoutForShape(this.engine, payload.shape);
    // An upload converted while it arrived is in C order: the engine's mode order for row_major only.
    const gathered = shapeLayout.layout === 'row_major' ? payload.gathered : undefined;
    const normOf = (p: Payload) => denseNorm(this.engine, p.data, p.dtype, p.shape, shapeLayout.layout, shapeLayout.modes);
    const rep = await chooseRepresentation({ ...payload, gathered }, target, {
      engine: this.engine,
      compressionThresholdBytes: this.opts.compressionThresholdBytes,
      run: (work, estimatedWork) => this.admission.run(turn, work, estimatedWork),
      norm: normOf,
    });
    const layout = rep.compressed ? { layout: rep.layout, modes: rep.tt.modes } : shapeLayout;
    let norm: number | null;
    if (rep.compressed) {
      norm = await this.engine.norm(rep.tt);
      if (!Number.isFinite(norm)) norm = null;
    } else if (rep.reason === 'non_finite') {
      norm = null;
    } else {
      norm = rep.inputNorm !== undefined ? rep.inputNorm : await normOf(payload);
    }
    const storedCoreBytes = rep.compressed ? coreBytes(rep.tt) : 0;
    const blobKind = rep.compressed ? 'cores' : 'raw';
    const reservation = this.storage.reserve(tenantId,
      storedBytesOf({ blob_kind: blobKind, stored_core_bytes: storedCoreBytes, original_bytes: payload.data.length }));
    let blob: BlobRef;
    try {
      blob = rep.compressed
        ? await this.blobs.write('cores', encodeCores(rep.tt))
        : await this.blobs.write('raw', payload.data);
    } catch (err) {
      this.storage.release(reservation);
      throw err;
    }
    const row: NewRow = {
      kind: payload.kind,
      dtype: payload.dtype,
      shape: JSON.stringify(payload.shape),
      layout: layout.layout,
      modes: JSON.stringify(rep.compressed ? rep.tt.modes : layout.modes),
      ranks: JSON.stringify(rep.compressed ? rep.tt.ranks : []),
      core_dtype: rep.compressed ? coreDtypeOf(rep.tt) : null,
      verdict: rep.verdict,
      compressed: rep.compressed ? 1 : 0,
      original_bytes: payload.data.length,
      stored_core_bytes: storedCoreBytes,
      ...(rep.compressed ? rep.fingerprint : ZERO_FINGERPRINT),
      tolerance: target.tolerance,
      max_rank_request: target.maxRank ?? null,
      domain: target.domain,
      source: 'put',
      passthrough_reason: rep.compressed ? null : rep.reason,
      metadata: JSON.stringify(input.metadata),
      norm,
      blob_id: blob.id,
      blob_kind: blobKind,
      checksum: blob.checksum,
    };
    return { key: input.key, row, metadata: input.metadata, blob, reservation };
  }

  /**
   * Commit prepared entries in one transaction (all visible or none), with `also` run inside the
   * same transaction (e.g. a job's state change); on failure the prepared blobs are removed.
   */
  commitPrepared(tenantId: string, namespace: string, items: PreparedEntry[], also?: (tx: Tx) => Promise<void>): Promise<EntryRow[]> {
    return this.commit(tenantId, namespace, items, [], also);
  }

  /** Remove the blobs of prepared entries that will not be committed, and free their bytes. */
  async discard(items: PreparedEntry[]): Promise<void> {
    for (const it of items) if (it.reservation) this.storage.release(it.reservation);
    await Promise.all(items.map((it) => this.blobs.remove(it.blob.id).catch(() => undefined)));
  }

  /**
   * Store validated cores as they are (verdict exact): all entries or none. The bytes of all of them
   * are reserved at once, before any blob is written.
   */
  async putCores(tenantId: string, namespace: string, items: CoresInput[]): Promise<EntryRow[]> {
    const reservation = this.storage.reserve(tenantId, items.reduce((sum, it) => sum + coreBytes(it.tt), 0));
    const prepared: PreparedEntry[] = [];
    try {
      for (const it of items) prepared.push(await this.writeCores(it, null));
    } catch (err) {
      this.storage.release(reservation);
      await this.discard(prepared);
      throw err;
    }
    return this.commit(tenantId, namespace, prepared, [reservation]);
  }

  /**
   * putCores' first half for one entry (as prepare is put's): the cores as a durable blob, the row
   * not yet visible, the bytes reserved. Simulation outputs that a solver produced as trains go through here.
   */
  async prepareCores(tenantId: string, it: CoresInput): Promise<PreparedEntry> {
    const reservation = this.storage.reserve(tenantId, coreBytes(it.tt));
    try {
      return await this.writeCores(it, reservation);
    } catch (err) {
      this.storage.release(reservation);
      throw err;
    }
  }

  private async writeCores(it: CoresInput, reservation: StorageReservation | null): Promise<PreparedEntry> {
    let norm: number | null = await this.engine.norm(it.tt);
    if (!Number.isFinite(norm)) norm = null;
    const blob = await this.blobs.write('cores', encodeCores(it.tt));
    const numel = it.shape.reduce((a, b) => a * b, 1);
    return {
      key: it.key,
      metadata: it.metadata,
      blob,
      reservation,
      row: {
        kind: 'array',
        dtype: it.dtype,
        shape: JSON.stringify(it.shape),
        layout: it.layout,
        modes: JSON.stringify(it.tt.modes),
        ranks: JSON.stringify(it.tt.ranks),
        core_dtype: coreDtypeOf(it.tt),
        verdict: 'exact',
        compressed: 1,
        original_bytes: numel * ITEM_SIZE[it.dtype],
        stored_core_bytes: coreBytes(it.tt),
        ...ZERO_FINGERPRINT,
        tolerance: 0,
        max_rank_request: null,
        domain: it.domain,
        source: 'put_cores',
        passthrough_reason: null,
        metadata: JSON.stringify(it.metadata),
        norm,
        blob_id: blob.id,
        blob_kind: 'cores',
        checksum: blob.checksum,
      },
    };
  }

  /**
   * Make prepared entries visible, all at once, with `also` run in the transaction that does (e.g. a
   * job's state change). On success their reserved bytes become stored bytes; on failure the bytes
   * are released and the already durable blobs removed again.
   */
  private async commit(
    tenantId: string, namespace: string, items: PreparedEntry[], reservations: StorageReservation[],
    also?: (tx: Tx) => Promise<void>,
  ): Promise<EntryRow[]> {
    const held = [...reservations, ...items.flatMap((it) => (it.reservation ? [it.reservation] : []))];
    try {
      const rows = await this.writeRows(tenantId, namespace, items, also);
      for (const r of held) this.storage.commit(r);
      for (const it of items) {
        this.cache.invalidate(RowCache.id(tenantId, namespace, it.key));
        this.emit({ tenantId, namespace, key: it.key });
      }
      return rows;
    } catch (err) {
      for (const r of held) this.storage.release(r);
      await Promise.all(items.map((it) => this.blobs.remove(it.blob.id).catch(() => undefined)));
      throw err;
    }
  }

  /**
   * The rows of `items`, visible all at once. Within the writer's budget: one transaction. Beyond it
   * (write-pieces.ts): pieces of invisible rows in transactions of their own, then one transaction
   * that makes them all visible (and runs `also`); when a step fails, what was written is removed.
   */
  private async writeRows(tenantId: string, namespace: string, items: PreparedEntry[], also?: (tx: Tx) => Promise<void>): Promise<EntryRow[]> {
    const lane = laneOf(tenantId);
    const chunks = chunksByCost(piecesOf(items.map((it) => ({ metadata: it.metadata, metadataText: it.row.metadata }))), (p) => p.cost);
    const first = chunks.next();
    const second = first.done ? first : chunks.next();
    if (first.done || second.done) {
      const only = first.done ? { items: [], cost: 1 } : first.value;
      return this.db.write(async (tx) => {
        const out: EntryRow[] = [];
        for (const p of only.items) {
          if (p.first) out.push(await this.insertRow(tx, tenantId, namespace, items[p.index]!, false));
          await insertNames(tx, out[p.index]!, p.values);
        }
        if (also) await also(tx);
        return out;
      }, { lane, cost: only.cost });
    }
    // rows[i] is the row of items[i] (pieces keep the items' order), once its transaction committed.
    const rows: EntryRow[] = [];
    // Pieces are not durable on their own (a power loss loses only invisible rows); the fsync of the
    // transaction that makes them visible covers them.
    const stage = async (chunk: Chunk<Piece>) => {
      rows.push(...await this.db.write(async (tx) => {
        const made: EntryRow[] = [];
        for (const p of chunk.items) {
          if (p.first) made.push(await this.insertRow(tx, tenantId, namespace, items[p.index]!, true));
          await insertNames(tx, rows[p.index] ?? made.at(-1)!, p.values);
        }
        return made;
      }, { lane, cost: chunk.cost, durable: false }));
    };
    try {
      await stage(first.value);
      await stage(second.value);
      for (const chunk of chunks) await stage(chunk);
      await this.db.write(async (tx) => {
        await this.publish(tx, rows);
        if (also) await also(tx);
      }, { lane, cost: publishCost(rows.length) });
      return rows;
    } catch (err) {
      await this.removeRows(rows.map((r) => ({ id: r.id, metadataBytes: Buffer.byteLength(r.metadata) })), lane)
        .catch((e: unknown) => this.opts.log.error({ err: e }, 'could not remove the rows of a failed write; start() will'));
      throw err;
    }
  }

  /**
   * An entry's row and key row (its metadata names go in with insertNames). A `staged` row takes its
   * version number now (so no other write can take it) but stays invisible: the key's live version
   * is left as it is and the row is listed in entry_staged.
   */
  private async insertRow(tx: Tx, tenantId: string, namespace: string, item: PreparedEntry, staged: boolean): Promise<EntryRow> {
    const { key, row } = item;
    const k = await tx.get<{ last_version: number }>(
      'SELECT last_version FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?', [tenantId, namespace, key]);
    const version = (k?.last_version ?? 0) + 1;
    const createdAt = this.now();
    const full: Omit<EntryRow, 'id'> = { ...row, tenant_id: tenantId, namespace, key, version, created_at: createdAt, deleted_at: null };
    const cols = Object.keys(full) as Array<keyof typeof full>;
    const { lastID } = await tx.run(
      `INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      cols.map((c) => full[c] as string | number | null));
    if (staged) {
      await tx.run(
        `INSERT INTO entry_keys (tenant_id, namespace, key, last_version, live_id) VALUES (?, ?, ?, ?, NULL)
         ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = excluded.last_version`,
        [tenantId, namespace, key, version]);
      await tx.run('INSERT INTO entry_staged (id) VALUES (?)', [lastID]);
    } else {
      await tx.run(
        `INSERT INTO entry_keys (tenant_id, namespace, key, last_version, live_id) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = excluded.last_version, live_id = excluded.live_id`,
        [tenantId, namespace, key, version, lastID]);
    }
    return { ...full, id: lastID };
  }

  /**
   * Make staged rows visible: drop their staged marks, and make each key's newest staged version its
   * live one unless a newer version became live meanwhile (that write came after this one) or a
   * delete hid it (a newer version was deleted, so this one came before that delete). Two
   * statements, each a lookup by primary key per row, whatever the size of the namespace.
   */
  private async publish(tx: Tx, rows: EntryRow[]): Promise<void> {
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
      [JSON.stringify([...newest.values()].map((r) => r.id))]);
  }

  /**
   * Hide every version of a key at once; 404 when there is no live version. One small transaction
   * hides them (the key row: no live version, versions up to hidden_through hidden); stamping each
   * row's deleted_at, for compaction's clock, follows in transactions within the writer's budget
   * (a key may hold thousands of versions of 64 KiB of metadata each), and start() finishes it after
   * a crash.
   */
  async delete(tenantId: string, namespace: string, key: string): Promise<{ versions: number; deletedAt: number; purgeAfter: number }> {
    const lane = laneOf(tenantId);
    const result = await this.db.write(async (tx) => {
      const k = await tx.get<{ live_id: number | null; hidden_through: number }>(
        'SELECT live_id, hidden_through FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?', [tenantId, namespace, key]);
      if (!k || k.live_id === null) throw notFound(`no entry ${JSON.stringify(key)} in namespace ${namespace}`);
      const deletedAt = this.now();
      // The visible versions: above the last delete's hidden_through, not staged. Read from the
      // (key, version) index alone: a row's deleted_at sits behind its metadata's overflow pages.
      // Rows of a write in progress with a higher version become visible after this delete; those
      // below are hidden with the rest.
      const hidden = await tx.all<{ id: number; version: number }>(
        `SELECT id, version FROM entries e WHERE tenant_id = ? AND namespace = ? AND key = ? AND version > ? AND ${notStaged('e')}`,
        [tenantId, namespace, key, k.hidden_through]);
      const through = hidden.reduce((m, r) => Math.max(m, r.version), k.hidden_through);
      await tx.run('UPDATE entry_keys SET live_id = NULL, hidden_through = ?, hidden_at = ? WHERE tenant_id = ? AND namespace = ? AND key = ?',
        [through, deletedAt, tenantId, namespace, key]);
      return { versions: hidden.length, deletedAt, removedIds: hidden.map((r) => r.id) };
    }, { lane, cost: 2 });
    this.cache.invalidate(RowCache.id(tenantId, namespace, key));
    this.emit({ tenantId, namespace, key, removedIds: result.removedIds });
    // The delete took effect above; a stamping that fails is finished by the next start.
    await this.stampDeleted('k.tenant_id = ? AND k.namespace = ? AND k.key = ?', [tenantId, namespace, key], lane)
      .catch((err: unknown) => this.opts.log.error({ err }, 'could not stamp the versions a delete hid; the next start will'));
    return { versions: result.versions, deletedAt: result.deletedAt, purgeAfter: result.deletedAt + this.opts.retentionDays * 86400 };
  }

  /**
   * Stamp deleted_at (the key's hidden_at) on the rows a delete hid, for the keys matching `cond`
   * (over entry_keys `k`) whose stamping is unfinished (hidden_at set), in transactions within the
   * writer's budget (rewriting a row costs its pages); a key whose rows are all stamped is marked done.
   */
  private async stampDeleted(cond: string, params: Array<string | number>, lane: string): Promise<void> {
    const keys = await this.db.all<{ tenant_id: string; namespace: string; key: string; hidden_through: number; hidden_at: number }>(
      `SELECT tenant_id, namespace, key, hidden_through, hidden_at FROM entry_keys k WHERE ${cond} AND hidden_at IS NOT NULL`, params);
    for (const k of keys) {
      const where = [k.tenant_id, k.namespace, k.key];
      const rows = await this.db.all<{ id: number; metadataBytes: number }>(
        `SELECT id, length(CAST(metadata AS BLOB)) AS metadataBytes FROM entries
         WHERE tenant_id = ? AND namespace = ? AND key = ? AND version <= ? AND deleted_at IS NULL`, [...where, k.hidden_through]);
      for (const chunk of chunksByCost(rows, (r) => rowCost(r.metadataBytes))) {
        await this.db.write(async (tx) => {
          for (const r of chunk.items) await tx.run('UPDATE entries SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL', [k.hidden_at, r.id]);
        }, { lane, cost: chunk.cost });
      }
      // Done, unless another delete of the key started a stamping of its own meanwhile.
      await this.db.write((tx) => tx.run(
        'UPDATE entry_keys SET hidden_at = NULL WHERE tenant_id = ? AND namespace = ? AND key = ? AND hidden_at = ?', [...where, k.hidden_at]),
      { lane });
    }
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /** The live entry (latest, or the given version); undefined when absent or deleted. */
  async find(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow | undefined> {
    const id = RowCache.id(tenantId, namespace, key);
    const cached = this.cache.get(id, version);
    if (cached) return cached;
    const gen = this.cache.generation(id);
    const row = version === undefined
      ? await this.db.get<EntryRow>(
        `SELECT e.* FROM entry_keys k JOIN entries e ON e.id = k.live_id
         WHERE k.tenant_id = ? AND k.namespace = ? AND k.key = ?`, [tenantId, namespace, key])
      : await this.db.get<EntryRow>(
        `SELECT e.* FROM entries e JOIN entry_keys k ON k.tenant_id = e.tenant_id AND k.namespace = e.namespace AND k.key = e.key
         WHERE e.tenant_id = ? AND e.namespace = ? AND e.key = ? AND e.version = ? AND e.version > k.hidden_through
           AND e.deleted_at IS NULL AND ${notStaged('e')}`,
        [tenantId, namespace, key, version]);
    if (row) this.cache.set(id, gen, row, version === undefined);
    return row;
  }

  /** find() or 404. */
  async require(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow> {
    // A cached row is answered here, without find()'s own promise (the hot path of GET).
    const row = this.cache.get(RowCache.id(tenantId, namespace, key), version) ?? await this.find(tenantId, namespace, key, version);
    if (!row) {
      throw notFound(version === undefined
        ? `no entry ${JSON.stringify(key)} in namespace ${namespace}`
        : `no version ${version} of entry ${JSON.stringify(key)} in namespace ${namespace}`);
    }
    return row;
  }

  /** The stored cores of a compressed entry (checksum verified). */
  async readCores(row: StoredRef): Promise<TensorTrain> {
    const payload = await this.blobs.read(row.blob_id, 'cores', row.checksum);
    try {
      return decodeCores(payload);
    } catch {
      throw corrupted('the stored cores of this entry are damaged');
    }
  }

  /**
   * What serve dense returns: C-order little-endian bytes of the source dtype (a blob: its bytes).
   * A compressed entry is reconstructed into `out` when given and of the array's size (numel times
   * the item size, i.e. original_bytes), else into a fresh buffer; uncompressed data comes from its
   * blob file either way. The reconstruction runs in `turn` (engine admission).
   */
  async readDense(row: StoredRef, out?: Uint8Array, turn: Turn = SERVER_TURN): Promise<Uint8Array> {
    if (row.blob_kind === 'raw') {
      const data = await this.blobs.read(row.blob_id, 'raw', row.checksum);
      if (data.length !== row.original_bytes) throw corrupted('the stored data of this entry has the wrong length');
      return data;
    }
    const tt = await this.readCores(row);
    const shape = shapeOf(row);
    const size = shape.reduce((a, b) => a * b, 1) * ITEM_SIZE[row.dtype];
    const into = out?.length === size ? out : undefined;
    const work = this.engine.trainWork(tt.modes, tt.ranks, tt.modes).reconstruction;
    const { data } = await this.admission.run(turn, () => this.engine.reconstruct(tt, shape, row.layout, row.dtype, undefined, into), work);
    return data;
  }

  /** Latest live versions of keys with `prefix`, in byte order, and how many keys match in all. */
  async list(tenantId: string, namespace: string, prefix: string, limit: number, offset: number): Promise<{ rows: ListRow[]; total: number }> {
    const where = `k.tenant_id = $tenant AND k.namespace = $ns AND k.live_id IS NOT NULL AND k.key >= $prefix AND k.key GLOB $glob`;
    const params = { $tenant: tenantId, $ns: namespace, $prefix: prefix, $glob: globPrefix(prefix) };
    const rows = await this.db.all<ListRow & { total: number }>(
      `SELECT e.key, e.version, e.created_at, e.verdict, e.compressed, e.original_bytes, e.stored_core_bytes,
              (SELECT COUNT(*) FROM entry_keys k WHERE ${where}) AS total
       FROM entry_keys k JOIN entries e ON e.id = k.live_id
       WHERE ${where}
       ORDER BY k.key LIMIT $limit OFFSET $offset`,
      { ...params, $limit: limit, $offset: offset });
    if (rows.length > 0) return { rows, total: rows[0]!.total };
    const c = await this.db.get<{ total: number }>(`SELECT COUNT(*) AS total FROM entry_keys k WHERE ${where}`, params);
    return { rows: [], total: c?.total ?? 0 };
  }

  // -------------------------------------------------------------------------------------------
  // Compaction

  /**
   * Purge tombstoned entries deleted at least the retention period before `now` (unix seconds):
   * rows first (one transaction per batch), then their blobs. Returns how many entries went.
   */
  compact(now: number = this.now()): Promise<number> {
    this.compacting ??= (async () => {
      try {
        const cutoff = now - this.opts.retentionDays * 86400;
        return await this.purgeWhere('deleted_at IS NOT NULL AND deleted_at <= ?', [cutoff]);
      } finally {
        this.compacting = null;
      }
    })();
    return this.compacting;
  }

  /** Remove every entry, key counter and blob of a tenant (the gate calls this after retention). */
  async purgeTenant(tenantId: string): Promise<number> {
    const removedIds: number[] = [];
    const n = await this.purgeWhere('tenant_id = ?', [tenantId], removedIds);
    // Key rows are small and neighbours: KEY_ROWS_PER_TX of them a transaction (a tenant may hold millions).
    for (let changes = KEY_ROWS_PER_TX; changes === KEY_ROWS_PER_TX;) {
      ({ changes } = await this.db.write((tx) => tx.run(
        `DELETE FROM entry_keys WHERE (tenant_id, namespace, key) IN
           (SELECT tenant_id, namespace, key FROM entry_keys WHERE tenant_id = ? LIMIT ${KEY_ROWS_PER_TX})`, [tenantId]),
      { lane: laneOf(tenantId), cost: KEY_ROWS_PER_TX / 16 }));
    }
    this.cache.clear();
    this.emit({ tenantId, removedIds });
    return n;
  }

  /**
   * Purges the entries matching `cond` in batches (rows first, then blobs), giving their bytes back
   * to the storage ledger; their ids are appended to `purged` when given.
   */
  private async purgeWhere(cond: string, params: Array<string | number>, purged?: number[]): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.db.all<{ id: number; blob_id: string; tenant_id: string; bytes: number; metadataBytes: number }>(
        `SELECT id, blob_id, tenant_id, ${STORED_BYTES_SQL} AS bytes, length(CAST(metadata AS BLOB)) AS metadataBytes
         FROM entries WHERE ${cond} LIMIT ${PURGE_BATCH}`, params);
      if (rows.length === 0) break;
      await this.removeRows(rows, '');
      for (const r of rows) {
        await this.blobs.remove(r.blob_id);
        this.storage.freed(r.tenant_id, r.bytes);
      }
      purged?.push(...rows.map((r) => r.id));
      total += rows.length;
      if (rows.length < PURGE_BATCH) break;
    }
    if (total > 0) this.opts.log.info({ purged: total }, 'purged entries');
    return total;
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
         FROM entry_metadata WHERE entry_id IN (SELECT value FROM json_each(?))`, [ids]);
      for (const piece of chunksByCost(names, (n) => nameCost(n.bytes))) {
        await this.db.write((tx) => tx.run(
          'DELETE FROM entry_metadata WHERE (entry_id, name) IN (SELECT j.value ->> 0, j.value ->> 1 FROM json_each(?) j)',
          [JSON.stringify(piece.items.map((n) => [n.entry_id, n.name]))]), { lane, cost: piece.cost });
      }
      await this.db.write(async (tx) => {
        await tx.run('UPDATE entry_keys SET live_id = NULL WHERE live_id IN (SELECT value FROM json_each(?))', [ids]);
        await tx.run('DELETE FROM entry_staged WHERE id IN (SELECT value FROM json_each(?))', [ids]);
        await tx.run('DELETE FROM entries WHERE id IN (SELECT value FROM json_each(?))', [ids]);
      }, { lane, cost: chunk.cost });
    }
  }
}

/** Add metadata names of an entry to the index: one statement for all, {name: canonical JSON} unpacked by json_each. */
async function insertNames(tx: Tx, row: EntryRow, values: Piece['values']): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await tx.run(
    `INSERT INTO entry_metadata (entry_id, tenant_id, namespace, key, version, name, value_json)
     SELECT ?, ?, ?, ?, ?, j.key, j.value FROM json_each(?) j`,
    [row.id, row.tenant_id, row.namespace, row.key, row.version, JSON.stringify(values)]);
}

/** The engine's layout for a shape; shapes it cannot lay out (empty arrays) report row_major, no modes. */
export function layoutForShape(engine: Engine, shape: number[]): { layout: LayoutName; modes: number[] } {
  if (shape.some((d) => d === 0)) return { layout: 'row_major', modes: [] };
  try {
    return engine.layoutFor(shape);
  } catch {
    return { layout: 'row_major', modes: [] };
  }
}

/** A GLOB pattern matching exactly the strings that start with `prefix` (metacharacters escaped). */
export function globPrefix(prefix: string): string {
  return prefix.replace(/[*?[]/g, (c) => `[${c}]`) + '*';
}
