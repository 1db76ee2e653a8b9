// The decoded operands of stored entries (cores, or the values of an uncompressed entry), held in the
// engine's operand pool under the entry id, within a byte budget (SVC_GATE_CORE_CACHE_BYTES), least
// recently used first out. Repeated queries then read no blob files.
//
// An entry id's data never changes (a write makes a new row), so a held operand is never wrong; what
// writes and deletes change is which ids are still wanted: EntryService.onChange drops every id of
// the changed key (or tenant). Operands a running query uses are pinned until it releases them; a
// query whose candidates exceed the budget still runs (the pins hold them), and the cache shrinks
// back to the budget when it ends.
import type { OperandPool } from '../engine/types.js';
import type { EntryChange, EntryService } from '../entries/service.js';
import { shapeOf } from '../entries/entry.js';
import { limiter } from '../entries/limiter.js';
import type { StorageRef } from './candidates.js';

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
}

export interface CoreCacheStats {
  entries: number;
  /** Bytes of the held operands (native memory). */
  bytes: number;
  budgetBytes: number;
  hits: number;
  misses: number;
}

const LOAD_CONCURRENCY = 8;

function ownerOf(tenantId: string, namespace?: string, key?: string): string {
  return namespace === undefined ? `${tenantId}\u0000` : `${tenantId}\u0000${namespace}\u0000${key ?? ''}`;
}

export class CoreCache {
  /** Map order is recency: oldest first. */
  private readonly slots = new Map<number, Slot>();
  private readonly owners = new Map<string, Set<number>>();
  private readonly loading = new Map<number, Promise<void>>();
  private readonly runLoad = limiter(LOAD_CONCURRENCY);
  private bytes = 0;
  private hits = 0;
  private misses = 0;

  /**
   * `modesFor` names the mode sizes a stored train is held in when they are not its own (a put_cores
   * split brought into the engine's); undefined keeps the train's.
   */
  constructor(
    private readonly pool: OperandPool,
    private readonly entries: Pick<EntryService, 'readCores' | 'readDense'>,
    private readonly budgetBytes: number,
    private readonly modesFor: (row: CacheRow) => number[] | undefined = () => undefined,
  ) {}

  /**
   * Make every row's operand present and pinned; resolves to the release function, which the caller
   * must call once it no longer scores with them (a failed acquire releases what it pinned).
   */
  async acquire(rows: CacheRow[]): Promise<() => void> {
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
        await Promise.all(misses.map(async (row) => {
          await this.pin(row);
          pinned.push(row.id);
        }));
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
  async acquireIds(ids: ArrayLike<number>, refsOf: (missing: number[]) => Promise<CacheRow[]>): Promise<() => void> {
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
      if (rows.length !== new Set(missing).size) throw new Error(`core cache: ${missing.length - rows.length} operand(s) have no stored entry`);
      const releaseLoaded = await this.acquire(rows);
      return () => {
        releaseLoaded();
        releaseHeld();
      };
    } catch (err) {
      releaseHeld();
      throw err;
    }
  }

  /** Drop the operands of a changed key (every version), or of a whole tenant. */
  invalidate(change: EntryChange): void {
    const prefix = ownerOf(change.tenantId, change.namespace, change.key);
    const owners = change.namespace === undefined
      ? [...this.owners.keys()].filter((o) => o.startsWith(prefix))
      : [prefix];
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

  private async pin(row: CacheRow): Promise<void> {
    for (;;) {
      if (this.pinHeld(row.id)) return;
      const inFlight = this.loading.get(row.id);
      if (inFlight) {
        await inFlight; // then pin what it loaded (or load again if it went meanwhile)
        continue;
      }
      this.misses++;
      const load = this.load(row).finally(() => this.loading.delete(row.id));
      this.loading.set(row.id, load);
      await load;
      return; // load() pinned it for this caller
    }
  }

  /** Read the blob, hand it to the pool, and register the slot pinned once. */
  private async load(row: CacheRow): Promise<void> {
    const bytes = await this.runLoad(async () => {
      if (row.blob_kind === 'cores') return this.pool.addTrain(row.id, await this.entries.readCores(row), this.modesFor(row));
      const data = await this.entries.readDense(row);
      return this.pool.addDense(row.id, data, row.dtype, shapeOf(row), row.layout);
    });
    const owner = ownerOf(row.tenantId, row.namespace, row.key);
    this.slots.set(row.id, { bytes, owner, pins: 1, stale: false });
    let ids = this.owners.get(owner);
    if (!ids) this.owners.set(owner, (ids = new Set()));
    ids.add(row.id);
    this.bytes += bytes;
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
    this.pool.remove(id);
  }
}
