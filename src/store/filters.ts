// Metadata filters (CONTRACT.md section 6): an entry matches when each named top-level key is present
// and its value is JSON-equal to the given one. A store answers them from an index of every entry's
// top-level values as canonical JSON (object keys sorted), so JSON equality is text equality there:
// `true` is not `1`, `"1"` is not `1`, and {a, b} equals {b, a}.
export type Filters = Record<string, unknown>;

/** (name, canonical value) pairs, in a stable order. */
export function filterPairs(filters: Filters): Array<[string, string]> {
  return Object.keys(filters)
    .sort()
    .map((name) => [name, canonicalJson(filters[name])]);
}

/** JSON with object keys sorted at every depth: equal values give equal text (metadata index). */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}
