// The decoded operands of stored entries (cores, or the values of an uncompressed entry), held in the
// engine's operand pool under the entry id, within a byte budget (SVC_GATE_CORE_CACHE_BYTES), least
// recently used first out. Repeated queries then read no blob files.
//
// An entry id's data never changes (a write makes a new row), so a held operand is never wrong; what
// writes and deletes change is which ids are still wanted: EntryService.onChange drops every id of
// the changed key (or tenant). Operands a running query uses are pinned until it releases them; a
// query whose candidates exceed the budget still runs (the pins hold them; a top-K pins a group of
// about the budget at a time), and the cache shrinks back to the budget when it ends.
//
// A stored entry brought into another layout (a query whose candidates sit in that layout,
// query-layouts.ts) is held the same way, under an id of the cache's own and owned by the entry's
// key, so repeated queries by that key move it once and a write or delete of the key drops it with
// the entry's own operand.
//
// Loads are given out in fair turns across tenants (a load is its entry's tenant's), so a tenant's
// cold query over thousands of entries never queues another tenant's loads behind its own; a load
// that computes (a resplit into the engine's split, an array gathered into mode order) also takes
// its tenant's turn of the engine admission, as any engine work does.
import { abandoned, EngineAdmission } from '../admission/engine-admission.js';
import { ITEM_SIZE, type LayoutName, type OperandPool, type TensorTrain } from '../engine/types.js';
import type { EntryChange, EntryService } from '../entries/service.js';
import { shapeOf } from '../entries/entry.js';
import type { StorageRef } from '../store/entries.js';

/** A row to load: a candidate plus where it lives (for invalidation). */
export interface CacheRow extends Omit<StorageRef, 'key'> {
  tenantId: string;
  namespace: string;
  key: string;
}

interface Slot {
  bytes: number;
  owner: string;
  pins: number;
  /** Its key changed while pinned: dropped at the last release. */
  stale: boolean;
  /** For an entry held in another layout: its key in `moved`. */
  moved?: string;
}

export interface CoreCacheStats {
  entries: number;
  /** Bytes of the held operands (native memory). */
  bytes: number;
  budgetBytes: number;
  hits: number;
  misses: number;
}

/** Loads (blob reads, mostly I/O) at once, all tenants together. */
const LOAD_CONCURRENCY = 8;

/**
 * First id of the operands of entries held in another layout, counting up; entries have positive
 * ids and a query's transient operands count down from -1, so neither meets these.
 */
const FIRST_MOVED_ID = Number.MIN_SAFE_INTEGER;

function ownerOf(tenantId: string, namespace?: string, key?: string): string {
  return namespace === undefined ? `${tenantId}\u0000` : `${tenantId}\u0000${namespace}\u0000${key ?? ''}`;
}

export class CoreCache {
  /** Map order is recency: oldest first. */
  private readonly slots = new Map<number, Slot>();
  private readonly owners = new Map<string, Set<number>>();
  private readonly loading = new Map<number, Promise<void>>();
  /** Pool ids of entries held in another layout, by movedKey(entry id, layout). */
  private readonly moved = new Map<string, number>();
  private nextMovedId = FIRST_MOVED_ID;
  private readonly loads = new EngineAdmission({ slots: LOAD_CONCURRENCY });
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  /**
   * `modesFor` names the mode sizes a stored train is held in when they are not its own (a put_cores
   * split brought into the engine's); undefined keeps the train's. `engine` gives out the turns of
   * loads that compute; `resplitWork` estimates bringing a train into other modes (multiply-adds,
   * unknown by default: a heavy turn).
   */
  constructor(
    private readonly pool: OperandPool,
    private readonly entries: Pick<EntryService, 'readCores' | 'readDense'>,
    private readonly budgetBytes: number,
    private readonly modesFor: (row: CacheRow) => number[] | undefined = () => undefined,
    private readonly engine: EngineAdmission = new EngineAdmission(),
    private readonly resplitWork: (tt: TensorTrain, modes: number[]) => number = () => Infinity,
  ) {}

  /**
   * Make every row's operand present and pinned; resolves to the release function, which the caller
   * must call once it no longer scores with them (a failed acquire releases what it pinned). A load
   * not started when `signal` aborts is not started (the acquire rejects, 503).
   */
  async acquire(rows: CacheRow[], signal?: AbortSignal): Promise<() => void> {
    const pinned: number[] = [];
    const release = () => {
      for (const id of pinned.splice(0)) this.unpin(id);
      this.shrink();
    };
    const misses: CacheRow[] = [];
    for (const row of rows) {
      if (this.pinHeld(row.id)) pinned.push(row.id);
      else misses.push(row);
    }
    if (misses.length > 0) {
      try {
        await Promise.all(
          misses.map(async (row) => {
            await this.pin(row.id, ownerOf(row.tenantId, row.namespace, row.key), () => this.load(row, signal));
            pinned.push(row.id);
          }),
        );
      } catch (err) {
        release();
        throw err;
      }
    }
    return release;
  }

  /**
   * acquire() for operands known by id: those held are pinned at once, and `refsOf` is asked where
   * the others live (a warm cache reads nothing). Rejects when an id has no ref.
   */
  async acquireIds(ids: ArrayLike<number>, refsOf: (missing: number[]) => Promise<CacheRow[]>, signal?: AbortSignal): Promise<() => void> {
    const pinned: number[] = [];
    const missing: number[] = [];
    for (let j = 0; j < ids.length; j++) {
      const id = ids[j]!;
      if (this.pinHeld(id)) pinned.push(id);
      else missing.push(id);
    }
    const releaseHeld = () => {
      for (const id of pinned.splice(0)) this.unpin(id);
      this.shrink();
    };
    if (missing.length === 0) return releaseHeld;
    try {
      const rows = await refsOf(missing);
      if (rows.length !== new Set(missing).size)
        throw new Error(`core cache: ${missing.length - rows.length} operand(s) have no stored entry`);
      const releaseLoaded = await this.acquire(rows, signal);
      return () => {
        releaseLoaded();
        releaseHeld();
      };
    } catch (err) {
      releaseHeld();
      throw err;
    }
  }

  /**
   * The operand of stored entry `row` held in `layout` (not its own) present and pinned: `hold(id)`
   * builds it in the pool under `id` and resolves to its bytes (in the caller's turns: it is the
   * caller's engine work), once while it stays held. Resolves to its id and the release function, as
   * acquire() does.
   */
  async acquireMoved(
    row: CacheRow,
    layout: LayoutName,
    hold: (id: number) => Promise<number>,
  ): Promise<{ id: number; release: () => void }> {
    const key = movedKey(row.id, layout);
    let id = this.moved.get(key);
    if (id === undefined) this.moved.set(key, (id = this.nextMovedId++));
    await this.pin(id, ownerOf(row.tenantId, row.namespace, row.key), () => hold(id), key);
    let held = true;
    return {
      id,
      release: () => {
        if (!held) return;
        held = false;
        this.unpin(id);
        this.shrink();
      },
    };
  }

  /** Drop the operands of a changed key (every version), or of a whole tenant. */
  invalidate(change: EntryChange): void {
    const prefix = ownerOf(change.tenantId, change.namespace, change.key);
    const owners = change.namespace === undefined ? [...this.owners.keys()].filter((o) => o.startsWith(prefix)) : [prefix];
    for (const owner of owners) {
      for (const id of this.owners.get(owner) ?? []) {
        const slot = this.slots.get(id)!;
        if (slot.pins > 0) slot.stale = true;
        else this.drop(id);
      }
    }
  }

  stats(): CoreCacheStats {
    return { entries: this.slots.size, bytes: this.bytes, budgetBytes: this.budgetBytes, hits: this.hits, misses: this.misses };
  }

  /** Pin a held operand (most recently used now); false when it is not held. */
  private pinHeld(id: number): boolean {
    const slot = this.slots.get(id);
    if (!slot) return false;
    slot.pins++;
    this.slots.delete(id);
    this.slots.set(id, slot);
    this.hits++;
    return true;
  }

  /**
   * Pin operand `id` of `owner`, loading it with `load` (which resolves to its bytes in the pool)
   * when it is not held; `moved`: its key in `moved`.
   */
  private async pin(id: number, owner: string, load: () => Promise<number>, moved?: string): Promise<void> {
    for (;;) {
      if (this.pinHeld(id)) return;
      const inFlight = this.loading.get(id);
      if (inFlight) {
        // Then pin what it loaded, or load again if it went meanwhile or failed (its client may have
        // gone; an error of the entry's own comes back from this caller's load).
        await inFlight.catch(() => undefined);
        continue;
      }
      this.misses++;
      const loaded = load()
        .then(
          (bytes) => this.register(id, owner, bytes, moved),
          (err: unknown) => {
            if (moved !== undefined && this.moved.get(moved) === id && !this.slots.has(id)) this.moved.delete(moved);
            throw err;
          },
        )
        .finally(() => this.loading.delete(id));
      this.loading.set(id, loaded);
      await loaded;
      return; // registered pinned once, for this caller
    }
  }

  /** A loaded operand's slot, pinned once. */
  private register(id: number, owner: string, bytes: number, moved: string | undefined): void {
    this.slots.set(id, { bytes, owner, pins: 1, stale: false, moved });
    if (moved !== undefined) this.moved.set(moved, id);
    let ids = this.owners.get(owner);
    if (!ids) this.owners.set(owner, (ids = new Set()));
    ids.add(id);
    this.bytes += bytes;
  }

  /** Read the blob and hand it to the pool; resolves to its bytes there. In the row's tenant's turns. */
  private async load(row: CacheRow, signal: AbortSignal | undefined): Promise<number> {
    const turn = { owner: row.tenantId, signal };
    // The client's signal is read when the load's turn comes, not listened to while it waits: a cold
    // query queues thousands of loads, and thousands of listeners on one signal cost more than the loads.
    return this.loads.run({ owner: row.tenantId }, async () => {
      if (signal?.aborted) throw abandoned();
      if (row.blob_kind === 'cores') {
        const tt = await this.entries.readCores(row);
        const modes = this.modesFor(row);
        // A copy of the cores is no more work than reading them; a resplit is (up to MAX_TRAIN_WORK).
        return modes
          ? this.engine.run(turn, () => this.pool.addTrain(row.id, tt, modes), this.resplitWork(tt, modes))
          : this.pool.addTrain(row.id, tt);
      }
      const data = await this.entries.readDense(row);
      // Gathering the values into mode order: a pass over them.
      return this.engine.run(
        turn,
        () => this.pool.addDense(row.id, data, row.dtype, shapeOf(row), row.layout),
        data.length / ITEM_SIZE[row.dtype],
      );
    });
  }

  private unpin(id: number): void {
    const slot = this.slots.get(id);
    if (!slot) return;
    slot.pins--;
    if (slot.pins === 0 && slot.stale) this.drop(id);
  }

  /** Evict unpinned operands, least recently used first, until within the budget. */
  private shrink(): void {
    if (this.bytes <= this.budgetBytes) return;
    for (const [id, slot] of this.slots) {
      if (this.bytes <= this.budgetBytes) break;
      if (slot.pins === 0) this.drop(id);
    }
  }

  private drop(id: number): void {
    const slot = this.slots.get(id);
    if (!slot) return;
    this.slots.delete(id);
    this.bytes -= slot.bytes;
    const ids = this.owners.get(slot.owner);
    ids?.delete(id);
    if (ids && ids.size === 0) this.owners.delete(slot.owner);
    if (slot.moved !== undefined && this.moved.get(slot.moved) === id) this.moved.delete(slot.moved);
    this.pool.remove(id);
  }
}

function movedKey(entryId: number, layout: LayoutName): string {
  return `${entryId}\u0000${layout}`;
}
