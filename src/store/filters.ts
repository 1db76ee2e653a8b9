// Metadata filters (CONTRACT.md section 6): an entry matches when each named top-level key is present
// and its value is JSON-equal to the given one. A store answers them from an index of every entry's
// top-level values as canonical JSON (object keys sorted), so JSON equality is text equality there:
// `true` is not `1`, `"1"` is not `1`, and {a, b} equals {b, a}.
import { canonicalJson } from '../entries/entry.js';

export type Filters = Record<string, unknown>;

/** (name, canonical value) pairs, in a stable order. */
export function filterPairs(filters: Filters): Array<[string, string]> {
  return Object.keys(filters)
    .sort()
    .map((name) => [name, canonicalJson(filters[name])]);
}
