// A minimal .npy (format 1.0) writer, so the numpy baseline reads exactly the bytes the engine saw.
import { closeSync, openSync, writeSync } from 'node:fs';

const DESCR: Record<string, string> = { Float32Array: '<f4', Float64Array: '<f8' };

/** Writes a C-order Float32Array/Float64Array of `shape` as .npy (header padded to 64 bytes). */
export function writeNpy(file: string, data: Float32Array | Float64Array, shape: number[]): void {
  const descr = DESCR[data.constructor.name];
  if (!descr) throw new Error(`writeNpy: unsupported array type ${data.constructor.name}`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const preamble = Buffer.alloc(10);
  preamble.write('\x93NUMPY', 0, 'latin1');
  preamble[6] = 1;
  preamble[7] = 0;
  preamble.writeUInt16LE(header.length, 8);
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, preamble);
    writeSync(fd, Buffer.from(header, 'latin1'));
    writeSync(fd, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  } finally {
    closeSync(fd);
  }
}
