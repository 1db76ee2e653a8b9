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
  const little = descr[0] !== '>';
  const kind = descr[1];
  const size = Number(descr.slice(2));
  const n = shape.reduce((a, b) => a * b, 1);
  const off = start + headerLen;
  const data = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const p = off + i * size;
    if (kind === 'f')
      data[i] = size === 8 ? view.getFloat64(p, little) : size === 4 ? view.getFloat32(p, little) : half(view.getUint16(p, little));
    else if (kind === 'i')
      data[i] =
        size === 8
          ? Number(view.getBigInt64(p, little))
          : size === 4
            ? view.getInt32(p, little)
            : size === 2
              ? view.getInt16(p, little)
              : view.getInt8(p);
    else if (kind === 'u')
      data[i] =
        size === 8
          ? Number(view.getBigUint64(p, little))
          : size === 4
            ? view.getUint32(p, little)
            : size === 2
              ? view.getUint16(p, little)
              : view.getUint8(p);
    else if (kind === 'b') data[i] = view.getUint8(p);
    else throw new Error(`dtype ${descr} is not drawn`);
  }
  return { shape, data };
}
