// A .npy (format 1 to 3, any of the service's dtypes, either byte order, C order as serve answers it)
// decoded to float64 for drawing.
export interface NdArray {
  shape: number[];
  data: Float64Array;
}

function half(bits: number): number {
  const s = bits & 0x8000 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const f = bits & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

type Reader = (v: DataView, at: number, little: boolean) => number;

/** One value at a byte offset, by the dtype's kind and size (the descr without its byte order). */
const READERS: Record<string, Reader> = {
  f8: (v, at, le) => v.getFloat64(at, le),
  f4: (v, at, le) => v.getFloat32(at, le),
  f2: (v, at, le) => half(v.getUint16(at, le)),
  i8: (v, at, le) => Number(v.getBigInt64(at, le)),
  i4: (v, at, le) => v.getInt32(at, le),
  i2: (v, at, le) => v.getInt16(at, le),
  i1: (v, at) => v.getInt8(at),
  u8: (v, at, le) => Number(v.getBigUint64(at, le)),
  u4: (v, at, le) => v.getUint32(at, le),
  u2: (v, at, le) => v.getUint16(at, le),
  u1: (v, at) => v.getUint8(at),
  b1: (v, at) => v.getUint8(at),
};

export function decodeBase64(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function parseNpy(bytes: Uint8Array): NdArray {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = bytes[6];
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const start = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(start, start + headerLen));
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1] ?? '';
  const shape = (/'shape':\s*\(([^)]*)\)/.exec(header)?.[1] ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error('a Fortran-order .npy is not drawn');
  const read = READERS[descr.slice(1)];
  if (!read) throw new Error(`dtype ${descr} is not drawn`);
  const little = descr[0] !== '>';
  const size = Number(descr.slice(2));
  const n = shape.reduce((a, b) => a * b, 1);
  const off = start + headerLen;
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) data[i] = read(view, off + i * size, little);
  return { shape, data };
}
