// NumPy .npy files (format 1 to 3) to and from typed arrays, so arrays travel as binary bodies.
export type Dtype =
  'float64' | 'float32' | 'float16' | 'int64' | 'int32' | 'int16' | 'int8' | 'uint64' | 'uint32' | 'uint16' | 'uint8' | 'bool';

export type TypedArray =
  | Float64Array
  | Float32Array
  | BigInt64Array
  | BigUint64Array
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint32Array
  | Uint16Array
  | Uint8Array;

/** An n-dimensional array in C order. float16 is kept as its raw bits (Uint16Array); bool as 0/1 bytes. */
export interface NdArray {
  dtype: Dtype;
  shape: number[];
  data: TypedArray;
}

interface DtypeInfo {
  descr: string;
  size: number;
  make(buf: ArrayBuffer, offset: number, length: number): TypedArray;
}

const DTYPES: Record<Dtype, DtypeInfo> = {
  float64: { descr: '<f8', size: 8, make: (b, o, n) => new Float64Array(b, o, n) },
  float32: { descr: '<f4', size: 4, make: (b, o, n) => new Float32Array(b, o, n) },
  float16: { descr: '<f2', size: 2, make: (b, o, n) => new Uint16Array(b, o, n) },
  int64: { descr: '<i8', size: 8, make: (b, o, n) => new BigInt64Array(b, o, n) },
  int32: { descr: '<i4', size: 4, make: (b, o, n) => new Int32Array(b, o, n) },
  int16: { descr: '<i2', size: 2, make: (b, o, n) => new Int16Array(b, o, n) },
  int8: { descr: '|i1', size: 1, make: (b, o, n) => new Int8Array(b, o, n) },
  uint64: { descr: '<u8', size: 8, make: (b, o, n) => new BigUint64Array(b, o, n) },
  uint32: { descr: '<u4', size: 4, make: (b, o, n) => new Uint32Array(b, o, n) },
  uint16: { descr: '<u2', size: 2, make: (b, o, n) => new Uint16Array(b, o, n) },
  uint8: { descr: '|u1', size: 1, make: (b, o, n) => new Uint8Array(b, o, n) },
  bool: { descr: '|b1', size: 1, make: (b, o, n) => new Uint8Array(b, o, n) },
};

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** True when the bytes start with the .npy magic. */
export function isNpy(bytes: Uint8Array): boolean {
  return MAGIC.every((b, i) => bytes[i] === b);
}

function count(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** An NdArray from a typed array and a shape (default: 1-D); dtype from the typed array unless given. */
export function ndarray(data: TypedArray, shape: number[] = [data.length], dtype?: Dtype): NdArray {
  const d = dtype ?? dtypeOf(data);
  if (count(shape) !== data.length)
    throw new RangeError(`shape [${shape.join(', ')}] holds ${count(shape)} elements, data has ${data.length}`);
  if (DTYPES[d].size !== data.BYTES_PER_ELEMENT) throw new TypeError(`dtype ${d} does not match a ${data.constructor.name}`);
  return { dtype: d, shape, data };
}

function dtypeOf(data: TypedArray): Dtype {
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof BigUint64Array) return 'uint64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof Uint16Array) return 'uint16';
  return 'uint8';
}

/** The .npy file of an array (format 1.0, little-endian, C order). */
export function encodeNpy(a: NdArray): Uint8Array {
  const info = DTYPES[a.dtype];
  const shape = a.shape.length === 1 ? `(${a.shape[0]},)` : `(${a.shape.join(', ')})`;
  let header = `{'descr': '${info.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const out = new Uint8Array(10 + header.length + a.data.byteLength);
  out.set(MAGIC);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(Buffer.from(header, 'latin1'), 10);
  out.set(new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength), 10 + header.length);
  return out;
}

/** An array from .npy bytes (either byte order; Fortran order is transposed to C order). */
export function decodeNpy(bytes: Uint8Array): NdArray {
  if (!isNpy(bytes)) throw new Error('not an .npy file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6];
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = Buffer.from(bytes.subarray(start, start + headerLen)).toString(major === 3 ? 'utf8' : 'latin1');
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || shapeText === undefined) throw new Error(`bad .npy header: ${header}`);
  const shape = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  const entry = Object.entries(DTYPES).find(([, i]) => i.descr.slice(1) === descr.slice(1));
  if (entry === undefined) throw new Error(`unsupported dtype ${descr}`);
  const [dtype, info] = entry as [Dtype, DtypeInfo];
  const n = count(shape);
  // A copy with its own buffer, aligned for the typed array (a Buffer's slice would share its pool).
  const raw = Uint8Array.prototype.slice.call(bytes, start + headerLen, start + headerLen + n * info.size);
  if (raw.byteLength !== n * info.size) throw new Error('truncated .npy data');
  if (descr[0] === '>' && info.size > 1) for (let i = 0; i < raw.length; i += info.size) raw.subarray(i, i + info.size).reverse();
  let data = info.make(raw.buffer, 0, n);
  if (fortran && shape.length > 1) data = toC(data, shape, info);
  return { dtype, shape, data };
}

function toC(src: TypedArray, shape: number[], info: DtypeInfo): TypedArray {
  const out = info.make(new ArrayBuffer(src.byteLength), 0, src.length);
  const nd = shape.length;
  const fStride = new Array<number>(nd);
  let s = 1;
  for (let d = 0; d < nd; d++) {
    fStride[d] = s;
    s *= shape[d];
  }
  const idx = new Array<number>(nd).fill(0);
  for (let c = 0; c < src.length; c++) {
    let f = 0;
    for (let d = 0; d < nd; d++) f += idx[d] * fStride[d];
    (out as Uint8Array)[c] = (src as Uint8Array)[f];
    for (let d = nd - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}
