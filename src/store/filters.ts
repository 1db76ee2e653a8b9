// Metadata filters (CONTRACT.md section 6): an entry matches when each named top-level key is present
// and its value is JSON-equal to the given one. Answered from the entry_metadata index, which holds
// every entry's top-level values as canonical JSON (object keys sorted), so JSON equality is text
// equality there: `true` is not `1`, `"1"` is not `1`, and {a, b} equals {b, a}.
import { canonicalJson } from '../entries/entry.js';

export type Filters = Record<string, unknown>;

/** (name, canonical value) pairs, in a stable order. */
export function filterPairs(filters: Filters): Array<[string, string]> {
  return Object.keys(filters).sort().map((name) => [name, canonicalJson(filters[name])]);
}

/**
 * An SQL condition that holds when the entry whose id is `idColumn` matches every pair, with its
 * parameters: one primary-key probe of entry_metadata (entry_id, name) per filter.
 */
export function matchCondition(pairs: Array<[string, string]>, idColumn: string): { sql: string; params: string[] } {
  const sql = pairs
    .map(() => `EXISTS (SELECT 1 FROM entry_metadata m WHERE m.entry_id = ${idColumn} AND m.name = ? AND m.value_json = ?)`)
    .join(' AND ');
  return { sql: sql || '1', params: pairs.flat() };
}
