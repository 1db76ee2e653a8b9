import { expect } from 'chai';
import { decodeNpy, encodeNpy, encodeNpyHeader, parseNpyHeader } from '../../src/codec/npy.js';
import { decodePayload } from '../../src/codec/payload.js';
import { decodeBase64Strict } from '../../src/codec/base64.js';
import { ProblemError } from '../../src/errors.js';
import { f64, fill, fillFortran, npyFile } from './npy-fixtures.js';

async function rejects400(p: Promise<unknown> | (() => unknown), pattern?: RegExp): Promise<void> {
  try {
    if (typeof p === 'function') p();
    else await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemError);
    expect((err as ProblemError).status).to.equal(400);
    expect((err as ProblemError).code).to.equal('invalid_request');
    if (pattern) expect((err as ProblemError).message).to.match(pattern);
    return;
  }
  expect.fail('did not reject');
}

describe('.npy codec', () => {
  it('reads format versions 1.0, 2.0 and 3.0', async () => {
    for (const version of [1, 2, 3] as const) {
      const a = await decodeNpy(npyFile('<f8', [3], f64([1, 2, 3]), { version }));
      expect(a.dtype).to.equal('float64');
      expect(a.shape).to.deep.equal([3]);
      expect([0, 8, 16].map((o) => a.data.readDoubleLE(o))).to.deep.equal([1, 2, 3]);
    }
  });

  it('maps every supported descr to its NumPy name', async () => {
    const cases: Array<[string, string, number]> = [
      ['<f8', 'float64', 8], ['<f4', 'float32', 4], ['<f2', 'float16', 2], ['<i8', 'int64', 8], ['<i4', 'int32', 4],
      ['<i2', 'int16', 2], ['|i1', 'int8', 1], ['<u8', 'uint64', 8], ['<u4', 'uint32', 4], ['<u2', 'uint16', 2],
      ['|u1', 'uint8', 1], ['|b1', 'bool', 1],
    ];
    for (const [descr, name, size] of cases) {
      const a = await decodeNpy(npyFile(descr, [2], Buffer.alloc(2 * size, 1)));
      expect(a.dtype, descr).to.equal(name);
    }
  });

  it('converts big-endian data to little-endian', async () => {
    const be = Buffer.alloc(16);
    be.writeDoubleBE(1.5, 0);
    be.writeDoubleBE(-2.25, 8);
    const a = await decodeNpy(npyFile('>f8', [2], be));
    expect(a.data.readDoubleLE(0)).to.equal(1.5);
    expect(a.data.readDoubleLE(8)).to.equal(-2.25);
    const i = Buffer.alloc(4);
    i.writeInt16BE(-300, 0);
    i.writeInt16BE(7, 2);
    const b = await decodeNpy(npyFile('>i2', [2], i));
    expect(b.dtype).to.equal('int16');
    expect([b.data.readInt16LE(0), b.data.readInt16LE(2)]).to.deep.equal([-300, 7]);
  });

  it('transposes Fortran order to C order (2-D, 3-D, 8-D, every item size)', async () => {
    const shapes = [[3, 5], [2, 3, 4], [2, 1, 3, 2, 1, 2, 3, 2]];
    for (const shape of shapes) {
      for (const [descr, size] of [['<f8', 8], ['<i4', 4], ['<u2', 2], ['|u1', 1]] as const) {
        const value = (idx: number[]) => idx.reduce((a, v, j) => a * 7 + v + j, 1) % 251;
        const write = (buf: Buffer, o: number, idx: number[]) => {
          const v = value(idx);
          if (size === 8) buf.writeDoubleLE(v + 0.5, o);
          else if (size === 4) buf.writeInt32LE(v, o);
          else if (size === 2) buf.writeUInt16LE(v, o);
          else buf.writeUInt8(v, o);
        };
        const a = await decodeNpy(npyFile(descr, shape, fillFortran(shape, size, write), { fortran: true }));
        expect(a.shape).to.deep.equal(shape);
        expect(a.data.equals(fill(shape, size, write)), `${descr} ${shape}`).to.equal(true);
      }
    }
  });

  it('takes 0-D arrays and empty arrays', async () => {
    const a = await decodeNpy(npyFile('<f8', [], f64([42])));
    expect(a.shape).to.deep.equal([]);
    expect(a.data.readDoubleLE(0)).to.equal(42);
    const e = await decodeNpy(npyFile('<f4', [0, 3], Buffer.alloc(0)));
    expect(e.shape).to.deep.equal([0, 3]);
    expect(e.data.length).to.equal(0);
  });

  it('rejects a shape/length mismatch, truncation, object and structured dtypes, > 8 dims', async () => {
    await rejects400(decodeNpy(npyFile('<f8', [4], f64([1, 2, 3]))), /does not match/);
    await rejects400(decodeNpy(npyFile('<f8', [2], f64([1, 2, 3]))), /does not match/);
    await rejects400(decodeNpy(npyFile('<f8', [3], f64([1, 2, 3])).subarray(0, 30)), /truncated/);
    await rejects400(decodeNpy(npyFile('|O', [1], Buffer.alloc(8))), /object/);
    await rejects400(decodeNpy(npyFile('', [1], Buffer.alloc(8), {
      headerText: "{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
    })), /structured/);
    await rejects400(decodeNpy(npyFile('<U4', [1], Buffer.alloc(16))), /unsupported dtype/);
    await rejects400(decodeNpy(npyFile('<c16', [1], Buffer.alloc(16))), /unsupported dtype/);
    await rejects400(decodeNpy(npyFile('<f8', [1, 1, 1, 1, 1, 1, 1, 1, 1], f64([1]))), /at most 8/);
    await rejects400(decodeNpy(npyFile('<f8', [1], f64([1]), { headerText: "{'descr': '<f8', 'shape': (1,)}" })), /keys/);
    await rejects400(decodeNpy(npyFile('<f8', [1], f64([1]), { headerText: "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }" })));
    await rejects400(decodeNpy(npyFile('<f8', [1], f64([1]), { headerText: 'garbage' })));
    const badVersion = npyFile('<f8', [1], f64([1]));
    badVersion[6] = 9;
    await rejects400(decodeNpy(badVersion), /version/);
  });

  it('writes version 1.0 headers, 64-byte aligned, that it reads back', async () => {
    for (const shape of [[], [5], [2, 3], [1, 2, 1, 2, 1, 2, 1, 2]]) {
      const h = encodeNpyHeader('int16', shape);
      expect(h.length % 64).to.equal(0);
      expect(h[6]).to.equal(1);
      const n = shape.reduce((a, b) => a * b, 1);
      const file = encodeNpy('int16', shape, Buffer.alloc(2 * n, 3));
      const parsed = parseNpyHeader(file);
      expect(parsed).to.include({ dtype: 'int16', fortran: false, swap: false, dataOffset: h.length });
      expect(parsed.shape).to.deep.equal(shape);
    }
    expect(encodeNpyHeader('bool', [3]).toString('latin1')).to.include("'descr': '|b1'");
  });

  it('treats bytes without the magic, and octet-stream bodies, as uint8 blobs', async () => {
    const raw = Buffer.from('hello world');
    const p = await decodePayload(raw);
    expect(p).to.include({ kind: 'blob', dtype: 'uint8' });
    expect(p.shape).to.deep.equal([11]);
    const npy = npyFile('<f8', [1], f64([1]));
    expect((await decodePayload(Buffer.from(npy), true)).kind).to.equal('blob');
    expect((await decodePayload(Buffer.from(npy))).kind).to.equal('array');
  });
});

describe('strict base64', () => {
  it('decodes standard base64 with or without padding', () => {
    expect(decodeBase64Strict('aGVsbG8=', 'x').toString()).to.equal('hello');
    expect(decodeBase64Strict('aGVsbG8', 'x').toString()).to.equal('hello');
    expect(decodeBase64Strict('', 'x').length).to.equal(0);
  });
  it('rejects characters outside the alphabet, bad lengths and misplaced padding', async () => {
    for (const bad of ['not base64!!', 'aGVs bG8=', 'a', 'aGVsbG8==', 'aG=sbG8=', 'aGVs\nbG8=', 'ab-_']) {
      await rejects400(() => decodeBase64Strict(bad, 'data_b64'), /data_b64/);
    }
  });
});
