// Entries: versioning per (tenant, namespace, key), the write path (Oracle -> blob -> row), reads,
// soft delete, list, and compaction of tombstones. The write order is what makes a crash harmless:
// the blob is durable before the row that names it commits, so at worst a blob has no row (swept at
// start), never a row without its blob.
import type { Database, Tx } from '../store/db.js';
import { BlobStore, corrupted, type BlobRef } from '../store/blobs.js';
import { coreBytes, coreDtypeOf, decodeCores, encodeCores } from '../store/cores.js';
import { notFound } from '../errors.js';
import { ITEM_SIZE, type DType, type Engine, type LayoutName, type TensorTrain } from '../engine/types.js';
import type { Payload } from '../codec/payload.js';
import { chooseRepresentation, ZERO_FINGERPRINT, type Target } from './oracle.js';
import { canonicalJson, type EntryRow, type ListRow, shapeOf } from './entry.js';
import { denseNorm } from './norm.js';
import { EngineAdmission, SERVER_TURN, type Turn } from '../admission/engine-admission.js';
import { RowCache } from './row-cache.js';

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
}

const HOUR_MS = 3600_000;
const PURGE_BATCH = 500;

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

  constructor(opts: EntryServiceOptions) {
    this.opts = opts;
    this.db = opts.db;
    this.blobs = opts.blobs;
    this.engine = opts.engine;
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.admission = opts.admission ?? new EngineAdmission();
    this.cache = new RowCache(opts.rowCacheRows ?? 20000);
  }

  /**
   * Start-up work, before the server listens: remove orphan blobs and temp files, purge expired
   * tombstones, and schedule compaction hourly (the timer does not keep the process alive).
   */
  async start(): Promise<void> {
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
   * put's first half: the Oracle's representation and its durable blob, not yet visible to any read.
   * commitPrepared makes a batch visible at once; discard removes the blobs (a crash in between
   * leaves orphan blobs, which start() sweeps).
   */
  async prepare(input: Omit<PutInput, 'tenantId' | 'namespace'>): Promise<PreparedEntry> {
    const { payload, target } = input;
    const turn = input.turn ?? SERVER_TURN;
    const shapeLayout = layoutForShape(this.engine, payload.shape);
    // An upload converted while it arrived is in C order: the engine's mode order for row_major only.
    const gathered = shapeLayout.layout === 'row_major' ? payload.gathered : undefined;
    const normOf = (p: Payload) => denseNorm(this.engine, p.data, p.dtype, p.shape, shapeLayout.layout, shapeLayout.modes);
    const rep = await chooseRepresentation({ ...payload, gathered }, target, {
      engine: this.engine,
      compressionThresholdBytes: this.opts.compressionThresholdBytes,
      run: (work) => this.admission.run(turn, work),
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
    const blob = rep.compressed
      ? await this.blobs.write('cores', encodeCores(rep.tt))
      : await this.blobs.write('raw', payload.data);
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
      stored_core_bytes: rep.compressed ? coreBytes(rep.tt) : 0,
      ...(rep.compressed ? rep.fingerprint : ZERO_FINGERPRINT),
      tolerance: target.tolerance,
      max_rank_request: target.maxRank ?? null,
      domain: target.domain,
      source: 'put',
      passthrough_reason: rep.compressed ? null : rep.reason,
      metadata: JSON.stringify(input.metadata),
      norm,
      blob_id: blob.id,
      blob_kind: rep.compressed ? 'cores' : 'raw',
      checksum: blob.checksum,
    };
    return { key: input.key, row, metadata: input.metadata, blob };
  }

  /**
   * Commit prepared entries in one transaction (all visible or none), with `also` run inside the
   * same transaction (e.g. a job's state change); on failure the prepared blobs are removed.
   */
  commitPrepared(tenantId: string, namespace: string, items: PreparedEntry[], also?: (tx: Tx) => Promise<void>): Promise<EntryRow[]> {
    return this.commit(tenantId, namespace, items, items.map((it) => it.blob), also);
  }

  /** Remove the blobs of prepared entries that will not be committed. */
  async discard(items: PreparedEntry[]): Promise<void> {
    await Promise.all(items.map((it) => this.blobs.remove(it.blob.id).catch(() => undefined)));
  }

  /** Store validated cores as they are (verdict exact): all entries or none. */
  async putCores(tenantId: string, namespace: string, items: CoresInput[]): Promise<EntryRow[]> {
    const prepared: PreparedEntry[] = [];
    try {
      for (const it of items) prepared.push(await this.prepareCores(it));
    } catch (err) {
      await this.discard(prepared);
      throw err;
    }
    return this.commit(tenantId, namespace, prepared, prepared.map((p) => p.blob));
  }

  /**
   * putCores' first half for one entry (as prepare is put's): the cores as a durable blob, the row
   * not yet visible. Simulation outputs that a solver produced as trains go through here.
   */
  async prepareCores(it: CoresInput): Promise<PreparedEntry> {
    let norm: number | null = await this.engine.norm(it.tt);
    if (!Number.isFinite(norm)) norm = null;
    const blob = await this.blobs.write('cores', encodeCores(it.tt));
    const numel = it.shape.reduce((a, b) => a * b, 1);
    return {
      key: it.key,
      metadata: it.metadata,
      blob,
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

  /** One transaction for all rows; on failure the already durable blobs are removed again. */
  private async commit(
    tenantId: string, namespace: string,
    items: Array<{ key: string; row: NewRow; metadata: Record<string, unknown> }>, blobs: BlobRef[],
    also?: (tx: Tx) => Promise<void>,
  ): Promise<EntryRow[]> {
    try {
      const rows = await this.db.write(async (tx) => {
        const out: EntryRow[] = [];
        for (const it of items) out.push(await this.insert(tx, tenantId, namespace, it.key, it.row, it.metadata));
        if (also) await also(tx);
        return out;
      });
      for (const it of items) {
        this.cache.invalidate(RowCache.id(tenantId, namespace, it.key));
        this.emit({ tenantId, namespace, key: it.key });
      }
      return rows;
    } catch (err) {
      await Promise.all(blobs.map((b) => this.blobs.remove(b.id).catch(() => undefined)));
      throw err;
    }
  }

  private async insert(tx: Tx, tenantId: string, namespace: string, key: string, row: NewRow, metadata: Record<string, unknown>): Promise<EntryRow> {
    const k = await tx.get<{ last_version: number }>(
      'SELECT last_version FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?', [tenantId, namespace, key]);
    const version = (k?.last_version ?? 0) + 1;
    const createdAt = this.now();
    const full: Omit<EntryRow, 'id'> = { ...row, tenant_id: tenantId, namespace, key, version, created_at: createdAt, deleted_at: null };
    const cols = Object.keys(full) as Array<keyof typeof full>;
    const { lastID } = await tx.run(
      `INSERT INTO entries (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
      cols.map((c) => full[c] as string | number | null));
    await tx.run(
      `INSERT INTO entry_keys (tenant_id, namespace, key, last_version, live_id) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, namespace, key) DO UPDATE SET last_version = excluded.last_version, live_id = excluded.live_id`,
      [tenantId, namespace, key, version, lastID]);
    for (const [name, value] of Object.entries(metadata)) {
      await tx.run(
        'INSERT INTO entry_metadata (entry_id, tenant_id, namespace, key, version, name, value_json) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [lastID, tenantId, namespace, key, version, name, canonicalJson(value)]);
    }
    return { ...full, id: lastID };
  }

  /** Hide every version of a key at once; 404 when there is no live version. */
  async delete(tenantId: string, namespace: string, key: string): Promise<{ versions: number; deletedAt: number; purgeAfter: number }> {
    const result = await this.db.write(async (tx) => {
      const k = await tx.get<{ live_id: number | null }>(
        'SELECT live_id FROM entry_keys WHERE tenant_id = ? AND namespace = ? AND key = ?', [tenantId, namespace, key]);
      if (!k || k.live_id === null) throw notFound(`no entry ${JSON.stringify(key)} in namespace ${namespace}`);
      const deletedAt = this.now();
      const hidden = await tx.all<{ id: number }>(
        'SELECT id FROM entries WHERE tenant_id = ? AND namespace = ? AND key = ? AND deleted_at IS NULL',
        [tenantId, namespace, key]);
      const { changes } = await tx.run(
        'UPDATE entries SET deleted_at = ? WHERE tenant_id = ? AND namespace = ? AND key = ? AND deleted_at IS NULL',
        [deletedAt, tenantId, namespace, key]);
      await tx.run('UPDATE entry_keys SET live_id = NULL WHERE tenant_id = ? AND namespace = ? AND key = ?', [tenantId, namespace, key]);
      return {
        versions: changes, deletedAt, purgeAfter: deletedAt + this.opts.retentionDays * 86400,
        removedIds: hidden.map((r) => r.id),
      };
    });
    this.cache.invalidate(RowCache.id(tenantId, namespace, key));
    this.emit({ tenantId, namespace, key, removedIds: result.removedIds });
    return { versions: result.versions, deletedAt: result.deletedAt, purgeAfter: result.purgeAfter };
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
        `SELECT * FROM entries WHERE tenant_id = ? AND namespace = ? AND key = ? AND version = ? AND deleted_at IS NULL`,
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
    const { data } = await this.admission.run(turn, () => this.engine.reconstruct(tt, shape, row.layout, row.dtype, undefined, into));
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
    await this.db.write((tx) => tx.run('DELETE FROM entry_keys WHERE tenant_id = ?', [tenantId]));
    this.cache.clear();
    this.emit({ tenantId, removedIds });
    return n;
  }

  /** Purges the entries matching `cond` in batches; their ids are appended to `purged` when given. */
  private async purgeWhere(cond: string, params: Array<string | number>, purged?: number[]): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.db.all<{ id: number; blob_id: string }>(
        `SELECT id, blob_id FROM entries WHERE ${cond} LIMIT ${PURGE_BATCH}`, params);
      if (rows.length === 0) break;
      const ids = rows.map((r) => r.id);
      const marks = ids.map(() => '?').join(', ');
      await this.db.write(async (tx) => {
        await tx.run(`UPDATE entry_keys SET live_id = NULL WHERE live_id IN (${marks})`, ids);
        await tx.run(`DELETE FROM entry_metadata WHERE entry_id IN (${marks})`, ids);
        await tx.run(`DELETE FROM entries WHERE id IN (${marks})`, ids);
      });
      for (const r of rows) await this.blobs.remove(r.blob_id);
      purged?.push(...ids);
      total += rows.length;
      if (rows.length < PURGE_BATCH) break;
    }
    if (total > 0) this.opts.log.info({ purged: total }, 'purged entries');
    return total;
  }

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
