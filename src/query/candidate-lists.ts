// The candidate lists of recent top-K queries, by (tenant, namespace, shape): a top-K over
// a namespace that has not changed since the last one reads no rows (listing 10,000 candidates
// through SQLite costs ~25 ms, scoring them on the cached cores ~4 ms). Only unfiltered lists are
// kept; a filtered query lists from the store, which answers it from the metadata index.
//
// Every committed change of a namespace (EntryService.onChange) drops its lists and bumps its
// generation; a listing stores its result only if the generation it started at is still current,
// so a listing that raced a write cannot put a stale list back.
import type { EntryChange } from '../entries/service.js';
import type { CandidateRow, Comparable, EntrySearch } from '../store/entries.js';
import { filterPairs, type Filters } from '../store/filters.js';

interface ListSlot {
  ns: string;
  rows: readonly CandidateRow[];
  /**
   * The list without the last query key asked for (the same array while that key is asked for again,
   * so what a query derives from its candidates, e.g. their groups by layout, can be kept with it).
   */
  without?: { key: string; rows: readonly CandidateRow[] };
}

export class CandidateLists {
  /** Lists by class id, least recently used first. */
  private readonly lists = new Map<string, ListSlot>();
  /** Generation of each recently changed namespace (tenant \0 namespace) and tenant; others: baseline. */
  private readonly generations = new Map<string, number>();
  private counter = 0;
  private baseline = 0;
  private rows = 0;

  /** maxRows bounds the rows held over all lists (0 turns the cache off). */
  constructor(
    private readonly search: EntrySearch,
    private readonly maxRows: number,
  ) {}

  /**
   * The candidates of search.candidates(tenantId, namespace, like, excludeKey, filters), in the
   * same (ascending key) order. The array is shared: callers must not modify it.
   */
  async list(
    tenantId: string,
    namespace: string,
    like: Comparable,
    excludeKey: string | null,
    filters: Filters,
  ): Promise<readonly CandidateRow[]> {
    if (this.maxRows <= 0 || filterPairs(filters).length > 0) {
      return this.search.candidates(tenantId, namespace, like, excludeKey, filters);
    }
    const ns = `${tenantId}\u0000${namespace}`;
    const id = `${ns}\u0000${like.shape}`;
    let slot = this.lists.get(id);
    if (slot) {
      this.lists.delete(id); // most recently used last
      this.lists.set(id, slot);
    } else {
      const gen = this.generation(tenantId, ns);
      slot = { ns, rows: await this.search.candidates(tenantId, namespace, like, null, {}) };
      if (this.generation(tenantId, ns) === gen && slot.rows.length <= this.maxRows) this.store(id, slot);
    }
    if (excludeKey === null) return slot.rows;
    if (slot.without?.key !== excludeKey) slot.without = { key: excludeKey, rows: slot.rows.filter((r) => r.key !== excludeKey) };
    return slot.without.rows;
  }

  /** Drop what a committed change made stale (a tenant purge, without namespace: all of the tenant). */
  invalidate(change: EntryChange): void {
    const scope = change.namespace === undefined ? change.tenantId : `${change.tenantId}\u0000${change.namespace}`;
    this.generations.set(scope, ++this.counter);
    for (const [id, slot] of this.lists) {
      const stale = change.namespace === undefined ? slot.ns.startsWith(`${scope}\u0000`) : slot.ns === scope;
      if (stale) {
        this.lists.delete(id);
        this.rows -= slot.rows.length;
      }
    }
    // Generations matter only while a listing is in flight: past a bound, forget them all and move
    // every namespace to a new baseline (so no listing begun before can store its result).
    if (this.generations.size > 65536) {
      this.generations.clear();
      this.baseline = ++this.counter;
    }
  }

  stats(): { lists: number; rows: number } {
    return { lists: this.lists.size, rows: this.rows };
  }

  private generation(tenantId: string, ns: string): number {
    return Math.max(this.generations.get(ns) ?? this.baseline, this.generations.get(tenantId) ?? this.baseline);
  }

  private store(id: string, slot: ListSlot): void {
    const old = this.lists.get(id);
    if (old) this.rows -= old.rows.length;
    this.lists.set(id, slot);
    this.rows += slot.rows.length;
    while (this.rows > this.maxRows) {
      const [oldest, evicted] = this.lists.entries().next().value as [string, ListSlot];
      this.lists.delete(oldest);
      this.rows -= evicted.rows.length;
    }
  }
}
