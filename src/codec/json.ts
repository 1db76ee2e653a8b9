// Bounds on parsed JSON values (CONTRACT.md section 8): how deep a value nests and at least how large
// it is, measured without recursion before anything recursive (JSON.stringify, canonical JSON) walks
// it. V8's JSON.parse is iterative (it takes a million levels); its JSON.stringify and our own walks
// are not. The text of a body is bounded as it is read (codec/json-reader.ts).

export interface JsonMeasure {
  /** Levels of objects and arrays, counted up to the first past the limit. */
  depth: number;
  /**
   * A lower bound of the bytes of the value as compact JSON, counted up to the first past the
   * limit (each UTF-16 unit of a string is at least one byte of UTF-8 or of an escape).
   */
  bytesAtLeast: number;
}

/**
 * How deep `value` nests and at least how large it is as compact JSON, walked with an explicit
 * stack; the walk stops as soon as either passes its limit, so it visits at most what the limits
 * allow (plus the nodes that the body's own bounds admitted).
 */
export function measureJson(value: unknown, maxDepth: number, maxBytes: number): JsonMeasure {
  let depth = 0;
  let bytes = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, level] = stack.pop()!;
    if (v === null || typeof v !== 'object') {
      bytes += typeof v === 'string' ? v.length + 2 : typeof v === 'boolean' ? 4 : v === null ? 4 : 1;
    } else {
      if (level > depth) depth = level;
      if (depth > maxDepth) break;
      if (Array.isArray(v)) {
        bytes += 2 + Math.max(0, v.length - 1);
        for (const item of v) stack.push([item, level + 1]);
      } else {
        const keys = Object.keys(v);
        bytes += 2 + Math.max(0, keys.length - 1);
        for (const k of keys) {
          bytes += k.length + 3;
          stack.push([(v as Record<string, unknown>)[k], level + 1]);
        }
      }
    }
    if (bytes > maxBytes) break;
  }
  return { depth, bytesAtLeast: bytes };
}
