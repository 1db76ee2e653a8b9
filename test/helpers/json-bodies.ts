// JSON bodies for the reader's tests: the reader fed in a given chunking, and the one-shot reference it
// must agree with (what the server did before it read bodies as they arrive: a scan of the whole text
// for depth and structure, then one JSON.parse, then base64 decoding of the data strings).
import { Base64Data, base64DecodedLength, decodeBase64Strict } from '../../src/codec/base64.js';
import { JsonReader, type DataPaths, type JsonReaderLimits } from '../../src/codec/json-reader.js';
import { ProblemError } from '../../src/http/errors.js';
import { sizeText } from '../../src/limits/input.js';

export type Outcome = { value: Record<string, unknown> } | { status: number; message: string };

/** The object the reader makes of `bytes` given in chunks of the given sizes (the rest as one last chunk); throws its problem. */
export function readJson(
  bytes: Buffer,
  limits: Omit<JsonReaderLimits, 'maxBodyBytes'>,
  sizes: readonly number[] = [],
): Record<string, unknown> {
  const reader = new JsonReader({ ...limits, maxBodyBytes: bytes.length });
  let at = 0;
  for (const n of sizes) {
    if (at >= bytes.length) break;
    reader.write(bytes.subarray(at, at + n));
    at += n;
  }
  if (at < bytes.length) reader.write(bytes.subarray(at));
  return reader.end();
}

/** readJson's outcome: the object, or the problem's status and message. */
export function readInChunks(bytes: Buffer, limits: Omit<JsonReaderLimits, 'maxBodyBytes'>, sizes: readonly number[] = []): Outcome {
  try {
    return { value: readJson(bytes, limits, sizes) };
  } catch (err) {
    if (!(err instanceof ProblemError)) throw err;
    return { status: err.status, message: err.message };
  }
}

/** Chunk sizes that cut `length` bytes at random places (1 to `largest` bytes each). */
export function randomCuts(next: () => number, length: number, largest: number): number[] {
  const out: number[] = [];
  for (let total = 0; total < length;) {
    const n = 1 + Math.floor(next() * largest);
    out.push(n);
    total += n;
  }
  return out;
}

/** Levels of objects and arrays of a JSON text, by a plain walk of its characters. */
export function textDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '[' || c === '{') {
      max = Math.max(max, ++depth);
    } else if (c === ']' || c === '}') {
      depth--;
    }
  }
  return max;
}

/** Bytes outside strings, plus two per string and two per escape (the structure measure), of UTF-8 `bytes`. */
export function structureBytes(bytes: Buffer): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x22) {
      n++;
      continue;
    }
    n += 2;
    for (i++; i < bytes.length && bytes[i] !== 0x22; i++) {
      if (bytes[i] === 0x5c) {
        n += 2;
        i++;
      }
    }
  }
  return n;
}

/** Replace the strings at `paths` in `value` (parsed by JSON.parse) with what decoding them gives. */
function decodeAt(value: unknown, paths: DataPaths | true): unknown {
  if (paths === true) {
    if (typeof value !== 'string') return value;
    const implied = base64DecodedLength(value);
    try {
      return new Base64Data(decodeBase64Strict(value, 'x'), implied, true);
    } catch {
      return new Base64Data(Buffer.alloc(0), implied, false);
    }
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = paths['*'];
    return items === undefined ? value : value.map((v) => decodeAt(v, items));
  }
  const obj = value as Record<string, unknown>;
  for (const [name, sub] of Object.entries(paths)) {
    if (name !== '*' && Object.hasOwn(obj, name))
      Object.defineProperty(obj, name, { value: decodeAt(obj[name], sub), enumerable: true, writable: true, configurable: true });
  }
  return obj;
}

/** The one-shot reference: depth and structure over the whole text, then JSON.parse, then the data decoded. */
export function referenceRead(bytes: Buffer, limits: Omit<JsonReaderLimits, 'maxBodyBytes'>): Outcome {
  const text = bytes.toString('utf8');
  if (textDepth(text) > limits.maxDepth) {
    return { status: 400, message: `the JSON body nests deeper than ${limits.maxDepth} levels of objects and arrays` };
  }
  if (structureBytes(bytes) > limits.maxStructureBytes) {
    return {
      status: 413,
      message: `the JSON body has more than ${sizeText(limits.maxStructureBytes)} besides the plain characters of its strings (syntax, numbers and escapes count)`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { status: 400, message: 'malformed JSON body' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { status: 400, message: 'the request body must be a JSON object' };
  return { value: (limits.data ? decodeAt(value, limits.data) : value) as Record<string, unknown> };
}

/** An outcome as text: values in member order, data as its verdict, implied length and bytes. */
export function canonical(o: Outcome): string {
  if (!('value' in o)) return `${o.status} ${o.message}`;
  // Data written out in full for the comparison (a replacer function would make this ten times slower).
  const toJSON = Object.getOwnPropertyDescriptor(Base64Data.prototype, 'toJSON')!;
  Object.defineProperty(Base64Data.prototype, 'toJSON', {
    configurable: true,
    value(this: Base64Data) {
      return { base64: this.valid ? this.bytes('x').toString('hex') : 'invalid', implied: this.impliedLength };
    },
  });
  try {
    return JSON.stringify(o.value);
  } finally {
    Object.defineProperty(Base64Data.prototype, 'toJSON', toJSON);
  }
}
