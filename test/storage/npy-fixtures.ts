// Hand-built .npy files for tests (independent of src/codec): any descr, shape, order and version.
import { SPECS } from '../../src/config.js';

/** The element bound the tests' decodes get: SVC_GATE_MAX_PAYLOAD_BYTES's default. */
export const NPY_MAX_ELEMENTS = Number(SPECS.maxPayloadBytes.defaultText);

export interface NpyFileOptions {
  version?: 1 | 2 | 3;
  fortran?: boolean;
  /** Header dict text as written (default: NumPy's own style). */
  headerText?: string;
}

export function npyFile(descr: string, shape: number[], data: Uint8Array, opts: NpyFileOptions = {}): Buffer {
  const version = opts.version ?? 1;
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let dict = opts.headerText ?? `{'descr': '${descr}', 'fortran_order': ${opts.fortran ? 'True' : 'False'}, 'shape': ${shapeText}, }`;
  const pre = version === 1 ? 10 : 12;
  const unpadded = pre + Buffer.byteLength(dict, version === 3 ? 'utf8' : 'latin1') + 1;
  dict += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const text = Buffer.from(dict, version === 3 ? 'utf8' : 'latin1');
  const head = Buffer.alloc(pre);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]).copy(head, 0);
  head[6] = version;
  head[7] = 0;
  if (version === 1) head.writeUInt16LE(text.length, 8);
  else head.writeUInt32LE(text.length, 8);
  return Buffer.concat([head, text, data]);
}

/** Little-endian bytes of `values` as a typed array kind. */
export function f64(values: number[]): Buffer {
  return Buffer.from(new Float64Array(values).buffer);
}
export function f32(values: number[]): Buffer {
  return Buffer.from(new Float32Array(values).buffer);
}

/** C-order element bytes of an array given by a function of its multi-index. */
export function fill(shape: number[], itemsize: number, write: (buf: Buffer, offset: number, idx: number[]) => void): Buffer {
  const n = shape.reduce((a, b) => a * b, 1);
  const buf = Buffer.alloc(n * itemsize);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    write(buf, i * itemsize, idx);
    for (let j = shape.length - 1; j >= 0; j--) {
      if (++idx[j]! < shape[j]!) break;
      idx[j] = 0;
    }
  }
  return buf;
}

/** Fortran-order element bytes of the same array. */
export function fillFortran(shape: number[], itemsize: number, write: (buf: Buffer, offset: number, idx: number[]) => void): Buffer {
  const n = shape.reduce((a, b) => a * b, 1);
  const buf = Buffer.alloc(n * itemsize);
  const idx = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    write(buf, i * itemsize, idx);
    for (let j = 0; j < shape.length; j++) {
      if (++idx[j]! < shape[j]!) break;
      idx[j] = 0;
    }
  }
  return buf;
}
