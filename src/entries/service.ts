// Entries: versioning per (tenant, namespace, key), the write path (Oracle -> blob -> row), reads,
// soft delete, list, and compaction of tombstones. The write order is what makes a crash harmless:
// the blob is durable before the row that names it commits, so at worst a blob has no row (swept at
// start), never a row without its blob.
//
// The rows go through the EntryStore (src/store/entries.ts), which keeps every write within its
// writer's budget and all of a batch visible at once or not at all; a write interrupted by a stop
// leaves invisible rows that start() removes.
import type { EntryRow, EntryStore, ListRow, NewEntryRow, PurgeScope, StoredRef } from '../store/entries.js';
import type { Transaction } from '../store/transaction.js';
import { BlobCorrupted, type BlobKind, type BlobRef, type BlobStore } from '../store/blobs.js';
import { coreBytes, coreDtypeOf, decodeCores, encodeCores } from '../store/cores.js';
import { badRequest, notFound, ProblemError } from '../http/errors.js';
import { ITEM_SIZE, type DType, type Engine, type LayoutName, type Selection, type TensorTrain } from '../engine/types.js';
import { isInvalidInput } from '../engine/index.js';
import { MAX_SELECTION_WORK_PER_VALUE, MAX_TRAIN_WORK } from '../engine/limits.js';
import type { Payload } from '../codec/payload.js';
import { chooseRepresentation, ZERO_FINGERPRINT, type Target } from './oracle.js';
import { shapeOf } from './entry.js';
import { denseNorm } from './norm.js';
import { EngineAdmission, SERVER_TURN, type Turn } from '../admission/engine-admission.js';
import { RowCache } from './row-cache.js';
import { rowSpan } from './selection.js';
import { StorageLedger, storedBytesOf, type StorageQuotaOf, type StorageReservation } from './storage-quota.js';

export interface EntryLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EntryServiceOptions {
  /** Where the rows live (versions, keys, the metadata index). */
  store: EntryStore;
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
  /**
   * Tell the other nodes (their row caches and listeners) of committed changes; the write is answered
   * only after this resolves, so every node's next request sees it. Default: one node, nobody to tell.
   */
  announce?: (changes: EntryChange[]) => Promise<void>;
  /** Age under which start()'s sweep leaves an unclaimed blob alone (BlobStore.sweep); default 0, one node. */
  blobSweepGraceMs?: number;
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

/** A put whose blob is durable but whose row is not committed yet (EntryService.prepare). */
export interface PreparedEntry {
  key: string;
  row: NewEntryRow;
  metadata: Record<string, unknown>;
  blob: BlobRef;
  /** Its stored bytes held against the tenant's storage quota (null: held by the caller's reservation). */
  reservation: StorageReservation | null;
}

const HOUR_MS = 3600_000;

/** Removed entry ids one announcement carries at most (a purged tenant's may be millions): ~100 KB of JSON. */
export const ANNOUNCED_IDS_PER_MESSAGE = 10_000;

/**
 * `changes` as announcements of at most `maxIds` removed ids each: a change with more is split into
 * changes of the same scope, each with a slice of its ids (applying them one by one is applying it).
 */
export function announcements(changes: readonly EntryChange[], maxIds = ANNOUNCED_IDS_PER_MESSAGE): EntryChange[][] {
  const out: EntryChange[][] = [];
  let batch: EntryChange[] = [];
  let ids = 0;
  const push = (c: EntryChange) => {
    const n = c.removedIds?.length ?? 0;
    if (batch.length > 0 && ids + n > maxIds) {
      out.push(batch);
      batch = [];
      ids = 0;
    }
    batch.push(c);
    ids += n;
  };
  for (const c of changes) {
    const removed = c.removedIds ?? [];
    if (removed.length <= maxIds) push(c);
    else for (let i = 0; i < removed.length; i += maxIds) push({ ...c, removedIds: removed.slice(i, i + maxIds) });
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** Stored data that cannot be returned (a damaged or missing blob): an error, never wrong data. */
const corrupted = (detail: string): ProblemError => new ProblemError(500, 'data_corrupted', detail);
const PURGE_BATCH = 500;

export class EntryService {
  private readonly store: EntryStore;
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
    this.store = opts.store;
    this.blobs = opts.blobs;
    this.engine = opts.engine;
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.admission = opts.admission ?? new EngineAdmission();
    this.cache = new RowCache(opts.rowCacheRows ?? 20000);
    this.storage = new StorageLedger(opts.storageQuota, opts.store.shared ? opts.store : null, (err) =>
      opts.log.error({ err }, 'could not drop a storage hold'),
    );
  }

  /**
   * Start-up work, before the server listens: sum the stored bytes, remove the invisible rows of
   * writes a crash interrupted, finish the stamping of deletes it interrupted, remove orphan blobs and
   * temp files, purge expired tombstones, and schedule compaction (and the sweep of a shared blob store)
   * hourly (the timer does not keep the process alive).
   */
  async start(): Promise<void> {
    this.storage.load(await this.store.storedBytesByTenant());
    const unfinished = await this.purgeWhere({ staged: true });
    if (unfinished > 0) this.opts.log.info({ entries: unfinished }, 'removed the rows of writes interrupted by a stop');
    await this.store.stampDeleted('all');
    await this.sweepBlobs();
    await this.compact();
    const shared = (this.opts.blobSweepGraceMs ?? 0) > 0;
    this.timer = setInterval(() => {
      this.compact().catch((err) => this.opts.log.error({ err }, 'compaction failed'));
      // A store other nodes share collects the orphans of nodes that died at any time: sweep it hourly too.
      if (shared) this.sweepBlobs().catch((err) => this.opts.log.error({ err }, 'blob sweep failed'));
    }, HOUR_MS);
    this.timer.unref();
  }

  /** Remove the blobs no row names (older than the grace period, when nodes share the store). */
  private async sweepBlobs(): Promise<void> {
    const live = await this.store.blobIds();
    const swept = await this.blobs.sweep((id) => live.has(id), this.opts.blobSweepGraceMs ?? 0);
    if (swept.orphans > 0 || swept.temps > 0) this.opts.log.info(swept, 'removed orphan blobs and temp files');
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

  /** Changes another node committed (its announce): drop what the row cache holds of them and tell the listeners. */
  applyRemote(changes: EntryChange[]): void {
    for (const change of changes) {
      if (change.namespace !== undefined && change.key !== undefined)
        this.cache.invalidate(RowCache.id(change.tenantId, change.namespace, change.key));
      else this.cache.clear();
      this.emit(change);
    }
  }

  /** After a commit: this node's caches and listeners at once, then the other nodes. */
  private async changed(changes: EntryChange[]): Promise<void> {
    for (const c of changes) this.emit(c);
    const announce = this.opts.announce;
    if (announce) {
      for (const message of announcements(changes)) {
        await announce(message).catch((err: unknown) => this.opts.log.error({ err }, 'could not announce a change to the other nodes'));
      }
    }
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
    const reservation = await this.storage.reserve(
      tenantId,
      storedBytesOf({ blob_kind: blobKind, stored_core_bytes: storedCoreBytes, original_bytes: payload.data.length }),
    );
    let blob: BlobRef;
    try {
      blob = rep.compressed ? await this.blobs.write('cores', encodeCores(rep.tt)) : await this.blobs.write('raw', payload.data);
    } catch (err) {
      this.storage.release(reservation);
      throw err;
    }
    const row: NewEntryRow = {
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
  commitPrepared(
    tenantId: string,
    namespace: string,
    items: PreparedEntry[],
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]> {
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
    const reservation = await this.storage.reserve(
      tenantId,
      items.reduce((sum, it) => sum + coreBytes(it.tt), 0),
    );
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
    const reservation = await this.storage.reserve(tenantId, coreBytes(it.tt));
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
    tenantId: string,
    namespace: string,
    items: PreparedEntry[],
    reservations: StorageReservation[],
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]> {
    const held = [...reservations, ...items.flatMap((it) => (it.reservation ? [it.reservation] : []))];
    let rows: EntryRow[];
    try {
      rows = await this.store.insert(tenantId, namespace, items, this.now, also);
    } catch (err) {
      for (const r of held) this.storage.release(r);
      await Promise.all(items.map((it) => this.blobs.remove(it.blob.id).catch(() => undefined)));
      throw err;
    }
    for (const r of held) this.storage.commit(r);
    for (const it of items) this.cache.invalidate(RowCache.id(tenantId, namespace, it.key));
    await this.changed(items.map((it) => ({ tenantId, namespace, key: it.key })));
    return rows;
  }

  /**
   * Hide every version of a key at once; 404 when there is no live version. One small transaction
   * hides them (the key row: no live version, versions up to hidden_through hidden); stamping each
   * row's deleted_at, for compaction's clock, follows in transactions within the writer's budget
   * (a key may hold thousands of versions of 64 KiB of metadata each), and start() finishes it after
   * a crash.
   */
  async delete(tenantId: string, namespace: string, key: string): Promise<{ versions: number; deletedAt: number; purgeAfter: number }> {
    const deletedAt = this.now();
    const hidden = await this.store.hide(tenantId, namespace, key, deletedAt);
    if (!hidden) throw notFound(`no entry ${JSON.stringify(key)} in namespace ${namespace}`);
    this.cache.invalidate(RowCache.id(tenantId, namespace, key));
    await this.changed([{ tenantId, namespace, key, removedIds: hidden.removedIds }]);
    // The delete took effect above; a stamping that fails is finished by the next start.
    await this.store
      .stampDeleted({ tenantId, namespace, key })
      .catch((err: unknown) => this.opts.log.error({ err }, 'could not stamp the versions a delete hid; the next start will'));
    return { versions: hidden.versions, deletedAt, purgeAfter: deletedAt + this.opts.retentionDays * 86400 };
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  /** The live entry (latest, or the given version); undefined when absent or deleted. */
  async find(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow | undefined> {
    const id = RowCache.id(tenantId, namespace, key);
    const cached = this.cache.get(id, version);
    if (cached) return cached;
    const gen = this.cache.generation(id);
    const row = await this.store.find(tenantId, namespace, key, version);
    if (row) this.cache.set(id, gen, row, version === undefined);
    return row;
  }

  /** find() or 404. */
  async require(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow> {
    // A cached row is answered here, without find()'s own promise (the hot path of GET).
    const row = this.cache.get(RowCache.id(tenantId, namespace, key), version) ?? (await this.find(tenantId, namespace, key, version));
    if (!row) {
      throw notFound(
        version === undefined
          ? `no entry ${JSON.stringify(key)} in namespace ${namespace}`
          : `no version ${version} of entry ${JSON.stringify(key)} in namespace ${namespace}`,
      );
    }
    return row;
  }

  /** The stored cores of a compressed entry (checksum verified). */
  async readCores(row: StoredRef): Promise<TensorTrain> {
    const payload = await this.readBlob(row, 'cores');
    try {
      return decodeCores(payload);
    } catch {
      throw corrupted('the stored cores of this entry are damaged');
    }
  }

  /** A row's blob, checksum verified; a blob that cannot be returned is a 500 data_corrupted problem. */
  private async readBlob(row: StoredRef, kind: BlobKind): Promise<Buffer> {
    try {
      return await this.blobs.read(row.blob_id, kind, row.checksum);
    } catch (err) {
      if (err instanceof BlobCorrupted) throw corrupted(err.message);
      throw err;
    }
  }

  /** Bytes [offset, offset + length) of a passthrough entry's stored data (header checked, see BlobStore.readRange). */
  private async readBlobRange(row: StoredRef, offset: number, length: number): Promise<Buffer> {
    try {
      return await this.blobs.readRange(row.blob_id, 'raw', row.original_bytes, offset, length);
    } catch (err) {
      if (err instanceof BlobCorrupted) throw corrupted(err.message);
      throw err;
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
      const data = await this.readBlob(row, 'raw');
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

  /**
   * A selection checked against an entry and costed, from its row alone (no data read): 400 for a
   * selection the entry cannot answer (a level deeper than an axis allows, a point outside the coarse
   * grid) or one whose work would pass MAX_TRAIN_WORK and MAX_SELECTION_WORK_PER_VALUE per value.
   */
  planSelection(row: StoredRef & Pick<EntryRow, 'modes' | 'ranks' | 'blob_kind'>, selection: Selection): SelectionPart {
    const shape = shapeOf(row);
    const train =
      row.blob_kind === 'cores'
        ? { modes: JSON.parse(row.modes) as number[], ranks: JSON.parse(row.ranks) as number[], layout: row.layout }
        : undefined;
    let plan;
    try {
      plan = this.engine.selection(shape, selection, train);
    } catch (err) {
      if (isInvalidInput(err)) throw badRequest(err.message);
      throw err;
    }
    const values = plan.shape.reduce((a, b) => a * b, 1);
    const limit = Math.max(MAX_TRAIN_WORK, MAX_SELECTION_WORK_PER_VALUE * values);
    if (plan.work > limit) {
      throw badRequest(
        `this selection would cost ${plan.work.toExponential(2)} multiply-adds, more than ${limit.toExponential(2)} ` +
          `(${MAX_SELECTION_WORK_PER_VALUE} per value it returns): select fewer values at a time, or at a coarser level`,
        { work: plan.work, work_limit: limit },
      );
    }
    return { selection, shape: plan.shape, work: plan.work, bytes: values * ITEM_SIZE[row.dtype] };
  }

  /**
   * The values of a planned selection (C-order bytes of the entry's dtype): from the cores when the
   * entry is compressed, else from its stored data: only the rows the selection lies in when they are
   * at most half of it (rowSpan), else all of it, read once. Runs in `turn` (engine admission).
   */
  async readSelection(row: StoredRef, part: SelectionPart, turn: Turn = SERVER_TURN): Promise<Uint8Array> {
    const shape = shapeOf(row);
    if (row.blob_kind === 'raw') {
      const span = rowSpan(shape, part.selection);
      if (span) {
        const size = ITEM_SIZE[row.dtype];
        const data = await this.readBlobRange(row, span.offset * size, span.count * size);
        return this.admission.run(turn, () => this.engine.selectDense(data, row.dtype, span.shape, span.selection), part.work);
      }
      const data = await this.readDense(row);
      return this.admission.run(turn, () => this.engine.selectDense(data, row.dtype, shape, part.selection), part.work);
    }
    const tt = await this.readCores(row);
    return this.admission.run(turn, () => this.engine.reconstructSelection(tt, shape, row.layout, row.dtype, part.selection), part.work);
  }

  /** Latest live versions of keys with `prefix`, in byte order, and how many keys match in all. */
  list(tenantId: string, namespace: string, prefix: string, limit: number, offset: number): Promise<{ rows: ListRow[]; total: number }> {
    return this.store.list(tenantId, namespace, prefix, limit, offset);
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
        return await this.purgeWhere({ deletedBefore: cutoff });
      } finally {
        this.compacting = null;
      }
    })();
    return this.compacting;
  }

  /** Remove every entry, key counter and blob of a tenant (the gate calls this after retention). */
  async purgeTenant(tenantId: string): Promise<number> {
    const removedIds: number[] = [];
    const n = await this.purgeWhere({ tenantId }, removedIds);
    await this.store.removeKeys(tenantId);
    this.cache.clear();
    await this.changed([{ tenantId, removedIds }]);
    return n;
  }

  /**
   * Purges the entries of `scope` in batches (rows first, then blobs), giving their bytes back
   * to the storage ledger; their ids are appended to `purged` when given.
   */
  private async purgeWhere(scope: PurgeScope, purged?: number[]): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.store.purge(scope, PURGE_BATCH);
      if (rows.length === 0) break;
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
}

/** A selection planSelection() accepted: what it returns (shape, bytes) and its estimated work. */
export interface SelectionPart {
  selection: Selection;
  shape: number[];
  work: number;
  bytes: number;
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
