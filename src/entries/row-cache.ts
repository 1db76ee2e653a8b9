// Entry rows recently read, by (tenant, namespace, key): the latest live row and rows by version.
// Rows of a version never change, but which row is latest (and whether any is live) does; every
// write of a key goes through this process's EntryService, which drops the key here first and bumps
// its generation, so a read that raced a write cannot put a stale row back.
import type { EntryRow } from '../store/entries.js';

interface Slot {
  latest?: EntryRow;
  versions: Map<number, EntryRow>;
}

export class RowCache {
  private readonly slots = new Map<string, Slot>();
  /** Generation of each recently written key; keys not in the map are at `baseline`. */
  private readonly generations = new Map<string, number>();
  private counter = 0;
  private baseline = 0;
  private rows = 0;

  constructor(private readonly maxRows: number) {}

  static id(tenantId: string, namespace: string, key: string): string {
    return `${tenantId}\u0000${namespace}\u0000${key}`;
  }

  /** Generation of a key, to pass back to set(). */
  generation(id: string): number {
    return this.generations.get(id) ?? this.baseline;
  }

  get(id: string, version?: number): EntryRow | undefined {
    const slot = this.slots.get(id);
    if (!slot) return undefined;
    const row = version === undefined ? slot.latest : slot.versions.get(version);
    if (row) {
      // most recently used last
      this.slots.delete(id);
      this.slots.set(id, slot);
    }
    return row;
  }

  /** Remember a row read at generation `gen` (ignored when the key was written since). */
  set(id: string, gen: number, row: EntryRow, asLatest: boolean): void {
    if (this.maxRows <= 0 || this.generation(id) !== gen) return;
    let slot = this.slots.get(id);
    if (!slot) {
      slot = { versions: new Map() };
      this.slots.set(id, slot);
    }
    if (asLatest) {
      if (!slot.latest) this.rows++;
      slot.latest = row;
    } else {
      if (!slot.versions.has(row.version)) this.rows++;
      slot.versions.set(row.version, row);
    }
    while (this.rows > this.maxRows) {
      const [oldest, s] = this.slots.entries().next().value as [string, Slot];
      this.slots.delete(oldest);
      this.rows -= (s.latest ? 1 : 0) + s.versions.size;
    }
  }

  /** Forget a key (before its write commits) and make in-flight reads of it stale. */
  invalidate(id: string): void {
    this.generations.set(id, ++this.counter);
    const s = this.slots.get(id);
    if (s) {
      this.slots.delete(id);
      this.rows -= (s.latest ? 1 : 0) + s.versions.size;
    }
    // Generations matter only while a read may be in flight; to keep the map bounded, forget them
    // all at once and move every key to a new baseline (so no earlier read can insert).
    if (this.generations.size > 4 * Math.max(1024, this.maxRows)) this.forgetGenerations();
  }

  /** Forget everything (e.g. after a tenant purge). */
  clear(): void {
    this.slots.clear();
    this.rows = 0;
    this.forgetGenerations();
  }

  private forgetGenerations(): void {
    this.generations.clear();
    this.baseline = ++this.counter;
  }
}
