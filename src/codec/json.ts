// Bounds on JSON (CONTRACT.md section 8): how deep a document nests and how much of it is more than
// plain string characters, checked without recursion, on the text before it is parsed and on parsed
// values before anything recursive (JSON.stringify, canonical JSON) walks them. V8's JSON.parse is
// iterative (it takes a million levels); its JSON.stringify and our own walks are not.
import { badRequest, payloadTooLarge } from '../errors.js';
import { sizeText } from '../input-limits.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

export interface JsonTextLimits {
  /** Levels of objects and arrays (the outermost is level 1); deeper: 400. */
  maxDepth: number;
  /**
   * Bytes outside strings plus two per escape inside them; more: 413. The rest, the plain
   * characters of strings, is skipped with native searches, so a megabyte-long base64 string costs
   * the scan two memchr calls; what JSON.parse spends per token is bounded by this.
   */
  maxStructureBytes: number;
}

/**
 * Checks the UTF-8 text of a JSON document against `limits` before it is parsed. Malformed text is
 * left to JSON.parse to report (the scan only ever stops early). Cost: linear in the structure
 * counted, plus native searches over the strings' characters.
 */
export function checkJsonText(bytes: Buffer, limits: JsonTextLimits): void {
  const n = bytes.length;
  let depth = 0;
  let structure = 0;
  // Where the next backslash is at or after some earlier position (n: none left): searched again only
  // once the scan has passed it, so each byte is searched at most once however many strings there are.
  let nextEscape = -1;
  const escapeFrom = (from: number): number => {
    if (nextEscape < from) {
      const at = bytes.indexOf(BACKSLASH, from);
      nextEscape = at < 0 ? n : at;
    }
    return nextEscape;
  };
  const tooMuch = () => payloadTooLarge(`the JSON body has more than ${sizeText(limits.maxStructureBytes)} besides the `
    + 'plain characters of its strings (syntax, numbers and escapes count)');
  let i = 0;
  while (i < n) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      // A string: jump to its closing quote, counting the escapes on the way (an escaped quote among them).
      let from = i + 1;
      let close = bytes.indexOf(QUOTE, from);
      for (;;) {
        if (close < 0) return; // unterminated: JSON.parse reports it
        const escape = escapeFrom(from);
        if (escape > close) break;
        structure += 2;
        if (structure > limits.maxStructureBytes) throw tooMuch();
        from = escape + 2;
        if (close < from) close = bytes.indexOf(QUOTE, from);
      }
      structure += 2;
      i = close + 1;
    } else {
      if (c === OPEN_BRACKET || c === OPEN_BRACE) {
        if (++depth > limits.maxDepth) {
          throw badRequest(`the JSON body nests deeper than ${limits.maxDepth} levels of objects and arrays`);
        }
      } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
        depth--;
      }
      structure++;
      i++;
    }
    if (structure > limits.maxStructureBytes) throw tooMuch();
  }
}

/** The JSON object in `bytes` (UTF-8): 400 when it is malformed or not an object. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw badRequest('malformed JSON body');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest('the request body must be a JSON object');
  return value as Record<string, unknown>;
}

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
