// NumPy .npy files (format versions 1.0, 2.0 and 3.0) to and from C-order little-endian element bytes
// (CONTRACT.md section 2). Decoding is strict: anything the store could not give back exactly is a
// 400. Encoding always writes version 1.0, C order, little-endian.
//
// Byte swapping uses Buffer.swap16/32/64 (native). The Fortran-to-C transpose is the one element loop
// in JavaScript on the request path: it is rare (NumPy writes C order unless asked), it yields to the
// event loop every few million elements, and it touches each element once.
import { badRequest, excerpt } from '../http/errors.js';
import { ITEM_SIZE, type DType } from '../engine/types.js';
import { MAX_DIMS, NPY_MAX_DIM, NPY_MAX_HEADER_BYTES, sizeText } from '../limits/input.js';

export const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

/** A decoded array: `data` holds the elements in C order, little-endian (a view, not a copy, when it could be). */
export interface NpyArray {
  dtype: DType;
  shape: number[];
  data: Buffer;
}

export const DESCR_OF: Readonly<Record<DType, string>> = {
  float64: '<f8',
  float32: '<f4',
  float16: '<f2',
  int64: '<i8',
  int32: '<i4',
  int16: '<i2',
  int8: '|i1',
  uint64: '<u8',
  uint32: '<u4',
  uint16: '<u2',
  uint8: '|u1',
  bool: '|b1',
};

const DTYPE_OF_KIND: Record<string, DType> = {
  f8: 'float64',
  f4: 'float32',
  f2: 'float16',
  i8: 'int64',
  i4: 'int32',
  i2: 'int16',
  i1: 'int8',
  u8: 'uint64',
  u4: 'uint32',
  u2: 'uint16',
  u1: 'uint8',
  b1: 'bool',
};

export function isNpy(bytes: Uint8Array): boolean {
  return bytes.length >= NPY_MAGIC.length && NPY_MAGIC.equals(bytes.subarray(0, NPY_MAGIC.length));
}

export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

// ---------------------------------------------------------------------------------------------
// The header: a Python literal dict such as {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }

type PyValue = string | number | boolean | null | PyValue[] | { [k: string]: PyValue } | { tuple: PyValue[] };

/** A container being read: what it holds so far and what may come next. */
type Frame =
  | { kind: 'dict'; out: { [k: string]: PyValue }; key: string | null; expect: 'key' | 'colon' | 'value' | 'comma' }
  | { kind: 'seq'; close: ')' | ']'; out: PyValue[]; expect: 'value' | 'comma' };

/** A piece of header text for a message: cut short, then quoted. */
const quoted = (text: string): string => JSON.stringify(excerpt(text));

/**
 * Reads the header text with an explicit stack of open containers rather than by recursion, so a
 * header nested thousands deep is a 400 like any other malformed one, never a stack overflow.
 */
class HeaderParser {
  private i = 0;
  private readonly stack: Frame[] = [];
  constructor(private readonly s: string) {}

  parse(): PyValue {
    for (;;) {
      this.ws();
      const top = this.stack.at(-1);
      const c = this.s[this.i];
      let value: PyValue;
      if (
        top &&
        c === (top.kind === 'dict' ? '}' : top.close) &&
        (top.expect === 'comma' || top.expect === (top.kind === 'dict' ? 'key' : 'value'))
      ) {
        this.i++;
        this.stack.pop();
        value = top.kind === 'dict' ? top.out : top.close === ')' ? { tuple: top.out } : top.out;
      } else if (top?.expect === 'comma') {
        if (c !== ',') throw this.fail(`expected ',' or '${top.kind === 'dict' ? '}' : top.close}'`);
        this.i++;
        top.expect = top.kind === 'dict' ? 'key' : 'value';
        continue;
      } else if (top?.kind === 'dict' && top.expect === 'colon') {
        if (c !== ':') throw this.fail("expected ':'");
        this.i++;
        top.expect = 'value';
        continue;
      } else if (c === undefined) {
        throw this.fail('unexpected end');
      } else if (c === '{' || c === '(' || c === '[') {
        if (top?.kind === 'dict' && top.expect === 'key') throw this.fail('dict key is not a string');
        this.i++;
        this.stack.push(
          c === '{'
            ? { kind: 'dict', out: Object.create(null), key: null, expect: 'key' }
            : { kind: 'seq', close: c === '(' ? ')' : ']', out: [], expect: 'value' },
        );
        continue;
      } else {
        value = this.scalar(c);
      }
      if (this.deliver(value)) return value;
    }
  }

  /** Hands a value to the open container; true when it was the outermost value (and nothing follows). */
  private deliver(v: PyValue): boolean {
    const top = this.stack.at(-1);
    if (!top) {
      this.ws();
      if (this.i !== this.s.length) throw this.fail('trailing characters');
      return true;
    }
    if (top.kind === 'seq') {
      top.out.push(v);
      top.expect = 'comma';
    } else if (top.expect === 'key') {
      if (typeof v !== 'string') throw this.fail('dict key is not a string');
      if (v in top.out) throw this.fail(`duplicate key ${quoted(v)}`);
      top.key = v;
      top.expect = 'colon';
    } else {
      top.out[top.key!] = v;
      top.expect = 'comma';
    }
    return false;
  }

  private fail(what: string) {
    return badRequest(`invalid .npy header: ${what} at offset ${this.i}`);
  }

  private ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }

  private scalar(c: string): PyValue {
    if (c === "'" || c === '"') return this.str();
    if (/[-+0-9]/.test(c)) return this.num();
    const m = /^(True|False|None)\b/.exec(this.s.slice(this.i, this.i + 6));
    if (m) {
      this.i += m[1]!.length;
      return m[1] === 'True' ? true : m[1] === 'False' ? false : null;
    }
    throw this.fail(`unexpected character ${JSON.stringify(c)}`);
  }

  private str(): string {
    const q = this.s[this.i]!;
    this.i++;
    let out = '';
    while (this.i < this.s.length && this.s[this.i] !== q) {
      if (this.s[this.i] === '\\') {
        this.i++;
        if (this.i >= this.s.length) break;
      }
      out += this.s[this.i];
      this.i++;
    }
    if (this.s[this.i] !== q) throw this.fail('unterminated string');
    this.i++;
    return out;
  }

  private num(): number {
    // Integers only (shapes); Python 2 wrote long literals with an L suffix.
    const m = /^[-+]?\d+L?/.exec(this.s.slice(this.i, this.i + 40));
    if (!m) throw this.fail('bad number');
    this.i += m[0].length;
    const v = Number(m[0].replace(/L$/, ''));
    if (!Number.isSafeInteger(v)) throw this.fail('number out of range');
    return v;
  }
}

/** Map a NumPy `descr` to a supported dtype and whether its bytes need swapping. */
export function parseDescr(descr: PyValue): { dtype: DType; swap: boolean } {
  if (typeof descr !== 'string') {
    throw badRequest('structured dtypes are not supported: the .npy descr must be a simple type such as "<f8"');
  }
  const m = /^([<>|=]?)([a-zA-Z?])(\d*)$/.exec(descr);
  if (!m) throw badRequest(`unsupported dtype ${quoted(descr)}`);
  const [, order, kindChar, sizeText] = m as unknown as [string, string, string, string];
  if (kindChar === 'O') throw badRequest('object arrays (dtype "|O") are not supported');
  const code = kindChar === '?' && sizeText === '' ? 'b1' : `${kindChar}${sizeText}`;
  const dtype = DTYPE_OF_KIND[code];
  if (!dtype) {
    throw badRequest(`unsupported dtype ${quoted(descr)}; supported: ${Object.values(DESCR_OF).join(' ')} and their big-endian variants`);
  }
  const size = ITEM_SIZE[dtype];
  if (order === '|' && size > 1) throw badRequest(`dtype ${quoted(descr)} needs a byte order`);
  return { dtype, swap: order === '>' && size > 1 };
}

export interface NpyHeader {
  dtype: DType;
  shape: number[];
  fortran: boolean;
  swap: boolean;
  /** Offset of the first data byte. */
  dataOffset: number;
}

/**
 * Parse and validate the header of an .npy file held in `bytes` (400 on anything malformed). The
 * header is at most NPY_MAX_HEADER_BYTES, judged from its length field before its text is read; each
 * dimension is at most NPY_MAX_DIM and the non-zero ones multiply to at most `maxElements` (what
 * NumPy itself can allocate is bounded the same way, zero dimensions aside).
 */
export function parseNpyHeader(bytes: Uint8Array, maxElements: number): NpyHeader {
  if (!isNpy(bytes)) throw badRequest('not an .npy file (missing the \\x93NUMPY magic)');
  if (bytes.length < 10) throw badRequest('truncated .npy header');
  const major = bytes[6]!;
  const minor = bytes[7]!;
  if (![1, 2, 3].includes(major) || minor !== 0) throw badRequest(`unsupported .npy format version ${major}.${minor}`);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLen: number;
  let start: number;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    start = 10;
  } else {
    if (bytes.length < 12) throw badRequest('truncated .npy header');
    headerLen = buf.readUInt32LE(8);
    start = 12;
  }
  const dataOffset = start + headerLen;
  if (dataOffset > NPY_MAX_HEADER_BYTES) {
    throw badRequest(`.npy header of ${dataOffset} bytes; at most ${sizeText(NPY_MAX_HEADER_BYTES)} are allowed`);
  }
  if (dataOffset > bytes.length) throw badRequest('truncated .npy header');
  const text = buf.toString(major === 3 ? 'utf8' : 'latin1', start, dataOffset);
  const dict = new HeaderParser(text.trimEnd()).parse();
  if (dict === null || typeof dict !== 'object' || Array.isArray(dict) || 'tuple' in dict) {
    throw badRequest('invalid .npy header: not a dict');
  }
  const keys = Object.keys(dict).sort();
  if (keys.join(',') !== 'descr,fortran_order,shape') {
    throw badRequest(`invalid .npy header: keys must be descr, fortran_order and shape, got ${quoted(keys.join(', '))}`);
  }
  const d = dict as Record<string, PyValue>;
  const { dtype, swap } = parseDescr(d.descr!);
  if (typeof d.fortran_order !== 'boolean') throw badRequest('invalid .npy header: fortran_order must be True or False');
  const rawShape = d.shape!;
  const dims: PyValue[] | null = Array.isArray(rawShape)
    ? rawShape
    : rawShape !== null && typeof rawShape === 'object' && 'tuple' in rawShape && Array.isArray(rawShape.tuple)
      ? rawShape.tuple
      : null;
  if (!dims || !dims.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) {
    throw badRequest('invalid .npy header: shape must be a tuple of non-negative integers');
  }
  if (dims.length > MAX_DIMS) throw badRequest(`arrays may have at most ${MAX_DIMS} dimensions, got ${dims.length}`);
  const shape = dims as number[];
  let product = 1;
  for (const n of shape) {
    if (n > NPY_MAX_DIM) throw badRequest(`.npy shape dimension ${n} is over the largest allowed, 2^${Math.log2(NPY_MAX_DIM)}`);
    if (n > 0) product *= n;
    if (product > maxElements) {
      throw badRequest(`.npy shape (${shape.join(', ')}) has more than ${maxElements} elements (SVC_GATE_MAX_PAYLOAD_BYTES)`);
    }
  }
  return { dtype, shape, fortran: d.fortran_order, swap, dataOffset };
}

/**
 * Decode an .npy file into C-order little-endian element bytes. Converts in place in `bytes` where it
 * can (byte swapping), so the caller hands over ownership of `bytes`. `maxElements`: as parseNpyHeader.
 */
export async function decodeNpy(bytes: Buffer, maxElements: number): Promise<NpyArray> {
  const h = parseNpyHeader(bytes, maxElements);
  const itemsize = ITEM_SIZE[h.dtype];
  const n = numel(h.shape);
  const have = bytes.length - h.dataOffset;
  if (n * itemsize !== have) {
    throw badRequest(`.npy data length ${have} does not match shape [${h.shape.join(', ')}] x ${itemsize} bytes (${n * itemsize})`);
  }
  let data = bytes.subarray(h.dataOffset);
  if (h.swap) {
    if (itemsize === 2) data.swap16();
    else if (itemsize === 4) data.swap32();
    else if (itemsize === 8) data.swap64();
  }
  if (h.fortran && needsTranspose(h.shape)) data = await fortranToC(data, h.shape, itemsize);
  return { dtype: h.dtype, shape: h.shape, data };
}

function needsTranspose(shape: readonly number[]): boolean {
  // C and Fortran order coincide when at most one axis is longer than 1 (or the array is empty).
  return numel(shape) > 0 && shape.filter((d) => d > 1).length > 1;
}

const YIELD_EVERY = 1 << 22;

/** Transpose Fortran-order element bytes to C order (a new buffer). */
export async function fortranToC(src: Buffer, shape: readonly number[], itemsize: number): Promise<Buffer> {
  const nd = shape.length;
  const n = numel(shape);
  // Typed views need aligned offsets; a misaligned source is copied once.
  const aligned = src.byteOffset % 8 === 0 ? src : Buffer.from(src);
  const buffer = aligned.buffer as ArrayBuffer;
  const out = Buffer.alloc(src.length);
  const unit = itemsize === 8 ? 4 : itemsize;
  const lanes = itemsize === 8 ? 2 : 1;
  const View = unit === 4 ? Uint32Array : unit === 2 ? Uint16Array : Uint8Array;
  const s = new View(buffer, aligned.byteOffset, aligned.length / unit);
  const d = new View(out.buffer as ArrayBuffer, out.byteOffset, out.length / unit);
  // C-order strides of the output, in elements.
  const cs = new Array<number>(nd);
  let acc = 1;
  for (let j = nd - 1; j >= 0; j--) {
    cs[j] = acc;
    acc *= shape[j]!;
  }
  const counters = new Array<number>(nd).fill(0);
  // Walk the input in its (Fortran) order, axis 0 fastest, and scatter each element to its C offset.
  let o = 0;
  for (let i = 0; i < n; i++) {
    if (lanes === 2) {
      d[2 * o] = s[2 * i]!;
      d[2 * o + 1] = s[2 * i + 1]!;
    } else {
      d[o] = s[i]!;
    }
    let j = 0;
    counters[0]!++;
    o += cs[0]!;
    while (j < nd - 1 && counters[j] === shape[j]) {
      o -= cs[j]! * shape[j]!;
      counters[j] = 0;
      j++;
      counters[j]!++;
      o += cs[j]!;
    }
    if ((i & (YIELD_EVERY - 1)) === YIELD_EVERY - 1) await new Promise((r) => setImmediate(r));
  }
  return out;
}

/** The .npy v1.0 header (magic through padding) for a C-order little-endian array; 64-byte aligned. */
export function encodeNpyHeader(dtype: DType, shape: readonly number[]): Buffer {
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = `{'descr': '${DESCR_OF[dtype]}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const unpadded = 10 + dict.length + 1; // + '\n'
  dict += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const out = Buffer.alloc(10 + dict.length);
  NPY_MAGIC.copy(out, 0);
  out[6] = 1;
  out[7] = 0;
  out.writeUInt16LE(dict.length, 8);
  out.write(dict, 10, 'latin1');
  return out;
}

/** A whole .npy file (header + data) in one buffer. */
export function encodeNpy(dtype: DType, shape: readonly number[], data: Uint8Array): Buffer {
  const header = encodeNpyHeader(dtype, shape);
  return Buffer.concat([header, data], header.length + data.length);
}
