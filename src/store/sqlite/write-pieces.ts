// How a write of entries is cut to fit the writer's budget per transaction (db.ts's
// WRITE_COST_BUDGET, CONTRACT.md section 8). Costs are in the writer's units, about one B-tree row or
// 4 KiB page written each. Measured on the test host, the largest legal entry (256 top-level names,
// 64 KiB of metadata) writes about 300 pages: its 256 index rows land on 256 different pages of the
// (tenant, namespace, name, value) index, one region per name, so an entry's metadata is what costs,
// not its row. Such an entry is written in several pieces; small ones share a transaction.
import { WRITE_COST_BUDGET } from './db.js';
import { canonicalJson } from '../filters.js';

export const PAGE_BYTES = 4096;

/** An entry's own rows: its row (whose metadata text spills over pages), its key row, its staged mark. */
export function rowCost(metadataBytes: number): number {
  return 3 + metadataBytes / PAGE_BYTES;
}

/**
 * One top-level metadata name of `bytes` (name and canonical value): its index row, on a page of its
 * own, and its text twice (the entry's metadata rows sit together; the index rows do not).
 */
export function nameCost(bytes: number): number {
  return 1 + (2 * bytes) / PAGE_BYTES;
}

export interface Chunk<T> {
  items: T[];
  cost: number;
}

/** Consecutive runs of `items` whose cost stays within the budget (at least one item each), as they come. */
export function* chunksByCost<T>(items: Iterable<T>, costOf: (item: T) => number, budget = WRITE_COST_BUDGET): Generator<Chunk<T>> {
  let chunk: Chunk<T> | null = null;
  for (const item of items) {
    const c = costOf(item);
    if (chunk && chunk.cost + c > budget) {
      yield chunk;
      chunk = null;
    }
    if (chunk) {
      chunk.items.push(item);
      chunk.cost += c;
    } else {
      chunk = { items: [item], cost: c };
    }
  }
  if (chunk) yield chunk;
}

/**
 * Part of one entry's rows: the first piece inserts the entry (and the names that fit with it), the
 * others add more of its metadata names. `values` maps each name to its canonical JSON text.
 */
export interface Piece {
  /** Index of the entry in the write. */
  index: number;
  first: boolean;
  values: Record<string, string>;
  cost: number;
}

/**
 * The pieces of every entry, in order, each within the budget (an entry's row alone always fits).
 * A generator: each piece's canonical JSON is computed as it is taken, so a writer that awaits its
 * transactions between pieces never holds the event loop for a whole batch's metadata.
 */
export function* piecesOf(
  items: ReadonlyArray<{ metadata: Record<string, unknown>; metadataText: string }>,
  budget = WRITE_COST_BUDGET,
): Generator<Piece> {
  for (const [index, item] of items.entries()) {
    let piece: Piece = { index, first: true, values: {}, cost: rowCost(Buffer.byteLength(item.metadataText)) };
    let names = 0; // in `piece`
    for (const name of Object.keys(item.metadata)) {
      const value = canonicalJson(item.metadata[name]);
      const c = nameCost(Buffer.byteLength(name) + Buffer.byteLength(value));
      if (piece.cost + c > budget && names > 0) {
        yield piece;
        piece = { index, first: false, values: {}, cost: 0 };
        names = 0;
      }
      piece.values[name] = value;
      piece.cost += c;
      names++;
    }
    yield piece;
  }
}

/**
 * Making `n` staged rows visible: two statements of a primary-key lookup and a small row change per
 * row (measured: 1000 rows in about 10 ms on the test host). One step, so it cannot be split.
 */
export function publishCost(n: number): number {
  return 1 + n / 8;
}
