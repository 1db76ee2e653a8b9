import { expect } from 'chai';
import { decodeNpy, encodeNpy, encodeNpyHeader, parseNpyHeader } from '../../src/codec/npy.js';
import { decodePayload } from '../../src/codec/payload.js';
import { Base64Decoder, base64DecodedLength, decodeBase64Strict } from '../../src/codec/base64.js';
import { ProblemError } from '../../src/http/errors.js';
import { NPY_MAX_HEADER_BYTES } from '../../src/limits/input.js';
import { f64, fill, fillFortran, npyFile, NPY_MAX_ELEMENTS } from './npy-fixtures.js';

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
      const a = await decodeNpy(npyFile('<f8', [3], f64([1, 2, 3]), { version }), NPY_MAX_ELEMENTS);
      expect(a.dtype).to.equal('float64');
      expect(a.shape).to.deep.equal([3]);
      expect([0, 8, 16].map((o) => a.data.readDoubleLE(o))).to.deep.equal([1, 2, 3]);
    }
  });

  it('maps every supported descr to its NumPy name', async () => {
    const cases: Array<[string, string, number]> = [
      ['<f8', 'float64', 8],
      ['<f4', 'float32', 4],
      ['<f2', 'float16', 2],
      ['<i8', 'int64', 8],
      ['<i4', 'int32', 4],
      ['<i2', 'int16', 2],
      ['|i1', 'int8', 1],
      ['<u8', 'uint64', 8],
      ['<u4', 'uint32', 4],
      ['<u2', 'uint16', 2],
      ['|u1', 'uint8', 1],
      ['|b1', 'bool', 1],
    ];
    for (const [descr, name, size] of cases) {
      const a = await decodeNpy(npyFile(descr, [2], Buffer.alloc(2 * size, 1)), NPY_MAX_ELEMENTS);
      expect(a.dtype, descr).to.equal(name);
    }
  });

  it('converts big-endian data to little-endian', async () => {
    const be = Buffer.alloc(16);
    be.writeDoubleBE(1.5, 0);
    be.writeDoubleBE(-2.25, 8);
    const a = await decodeNpy(npyFile('>f8', [2], be), NPY_MAX_ELEMENTS);
    expect(a.data.readDoubleLE(0)).to.equal(1.5);
    expect(a.data.readDoubleLE(8)).to.equal(-2.25);
    const i = Buffer.alloc(4);
    i.writeInt16BE(-300, 0);
    i.writeInt16BE(7, 2);
    const b = await decodeNpy(npyFile('>i2', [2], i), NPY_MAX_ELEMENTS);
    expect(b.dtype).to.equal('int16');
    expect([b.data.readInt16LE(0), b.data.readInt16LE(2)]).to.deep.equal([-300, 7]);
  });

  it('transposes Fortran order to C order (2-D, 3-D, 8-D, every item size)', async () => {
    const shapes = [
      [3, 5],
      [2, 3, 4],
      [2, 1, 3, 2, 1, 2, 3, 2],
    ];
    for (const shape of shapes) {
      for (const [descr, size] of [
        ['<f8', 8],
        ['<i4', 4],
        ['<u2', 2],
        ['|u1', 1],
      ] as const) {
        const value = (idx: number[]) => idx.reduce((a, v, j) => a * 7 + v + j, 1) % 251;
        const write = (buf: Buffer, o: number, idx: number[]) => {
          const v = value(idx);
          if (size === 8) buf.writeDoubleLE(v + 0.5, o);
          else if (size === 4) buf.writeInt32LE(v, o);
          else if (size === 2) buf.writeUInt16LE(v, o);
          else buf.writeUInt8(v, o);
        };
        const a = await decodeNpy(npyFile(descr, shape, fillFortran(shape, size, write), { fortran: true }), NPY_MAX_ELEMENTS);
        expect(a.shape).to.deep.equal(shape);
        expect(a.data.equals(fill(shape, size, write)), `${descr} ${shape}`).to.equal(true);
      }
    }
  });

  it('takes 0-D arrays and empty arrays', async () => {
    const a = await decodeNpy(npyFile('<f8', [], f64([42])), NPY_MAX_ELEMENTS);
    expect(a.shape).to.deep.equal([]);
    expect(a.data.readDoubleLE(0)).to.equal(42);
    const e = await decodeNpy(npyFile('<f4', [0, 3], Buffer.alloc(0)), NPY_MAX_ELEMENTS);
    expect(e.shape).to.deep.equal([0, 3]);
    expect(e.data.length).to.equal(0);
  });

  it('rejects a shape/length mismatch, truncation, object and structured dtypes, > 8 dims', async () => {
    await rejects400(decodeNpy(npyFile('<f8', [4], f64([1, 2, 3])), NPY_MAX_ELEMENTS), /does not match/);
    await rejects400(decodeNpy(npyFile('<f8', [2], f64([1, 2, 3])), NPY_MAX_ELEMENTS), /does not match/);
    await rejects400(decodeNpy(npyFile('<f8', [3], f64([1, 2, 3])).subarray(0, 30), NPY_MAX_ELEMENTS), /truncated/);
    await rejects400(decodeNpy(npyFile('|O', [1], Buffer.alloc(8)), NPY_MAX_ELEMENTS), /object/);
    await rejects400(
      decodeNpy(
        npyFile('', [1], Buffer.alloc(8), {
          headerText: "{'descr': [('a', '<f8'), ('b', '<i4')], 'fortran_order': False, 'shape': (1,), }",
        }),
        NPY_MAX_ELEMENTS,
      ),
      /structured/,
    );
    await rejects400(decodeNpy(npyFile('<U4', [1], Buffer.alloc(16)), NPY_MAX_ELEMENTS), /unsupported dtype/);
    await rejects400(decodeNpy(npyFile('<c16', [1], Buffer.alloc(16)), NPY_MAX_ELEMENTS), /unsupported dtype/);
    await rejects400(decodeNpy(npyFile('<f8', [1, 1, 1, 1, 1, 1, 1, 1, 1], f64([1])), NPY_MAX_ELEMENTS), /at most 8/);
    await rejects400(decodeNpy(npyFile('<f8', [1], f64([1]), { headerText: "{'descr': '<f8', 'shape': (1,)}" }), NPY_MAX_ELEMENTS), /keys/);
    await rejects400(
      decodeNpy(
        npyFile('<f8', [1], f64([1]), { headerText: "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }" }),
        NPY_MAX_ELEMENTS,
      ),
    );
    await rejects400(decodeNpy(npyFile('<f8', [1], f64([1]), { headerText: 'garbage' }), NPY_MAX_ELEMENTS));
    const badVersion = npyFile('<f8', [1], f64([1]));
    badVersion[6] = 9;
    await rejects400(decodeNpy(badVersion, NPY_MAX_ELEMENTS), /version/);
  });

  it('refuses a header over 64 KiB from its length field, before reading its text', async () => {
    const atLimit = npyFile('<f8', [1], f64([1]), {
      headerText: `{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }${' '.repeat(NPY_MAX_HEADER_BYTES - 200)}`,
    });
    expect((await decodeNpy(atLimit, NPY_MAX_ELEMENTS)).shape).to.deep.equal([1]);
    const descr = `<f8${'x'.repeat(NPY_MAX_HEADER_BYTES)}`;
    for (const version of [2, 3] as const) {
      const over = npyFile(descr, [1], f64([1]), { version });
      await rejects400(decodeNpy(over, NPY_MAX_ELEMENTS), /header of \d+ bytes; at most 64 KiB/);
      // Only the length field is read: a header claiming 4 GiB over 12 bytes is refused the same way.
      const claim = Buffer.from(over.subarray(0, 12));
      claim.writeUInt32LE(0xffffffff, 8);
      await rejects400(() => parseNpyHeader(claim, NPY_MAX_ELEMENTS), /at most 64 KiB/);
    }
  });

  it('answers a header nested thousands deep with a 400, not a stack overflow', async () => {
    for (const depth of [100, 5000, 30000]) {
      const nest = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const file = npyFile('', [1], f64([1]), { version: 2, headerText: `{'descr': ${nest}, 'fortran_order': False, 'shape': (1,), }` });
      await rejects400(decodeNpy(file, NPY_MAX_ELEMENTS), /structured/);
    }
    const unclosed = npyFile('', [1], f64([1]), { version: 2, headerText: `{'shape': ${'('.repeat(40000)}` });
    await rejects400(decodeNpy(unclosed, NPY_MAX_ELEMENTS), /unexpected end/);
  });

  it("bounds each dimension by 2^40 and the non-zero dimensions' product by the payload limit", async () => {
    const header = (shape: string) =>
      npyFile('', [], Buffer.alloc(0), { headerText: `{'descr': '<f4', 'fortran_order': False, 'shape': ${shape}, }` });
    await rejects400(decodeNpy(header(`(0, ${2 ** 53 - 1}, ${2 ** 53 - 1})`), NPY_MAX_ELEMENTS), /over the largest allowed, 2\^40/);
    await rejects400(decodeNpy(header(`(${2 ** 40 + 1}, 0)`), NPY_MAX_ELEMENTS), /2\^40/);
    await rejects400(decodeNpy(header(`(0, ${2 ** 20}, ${2 ** 20})`), 1 << 30), /more than 1073741824 elements/);
    await rejects400(decodeNpy(header('(0, 1000, 1000)'), 999_999), /more than 999999 elements/);
    expect((await decodeNpy(header('(0, 1000, 1000)'), 1_000_000)).shape).to.deep.equal([0, 1000, 1000]);
    expect((await decodeNpy(npyFile('<f4', [4, 4], Buffer.alloc(64)), 16)).shape).to.deep.equal([4, 4]);
    await rejects400(decodeNpy(npyFile('<f4', [4, 4], Buffer.alloc(64)), 15), /more than 15 elements/);
  });

  it('quotes at most a short piece of the header in its messages', async () => {
    const long = 'z'.repeat(100_000);
    const cases = [
      npyFile(`<${long}`, [1], f64([1]), { version: 2 }),
      npyFile('<f8', [1], f64([1]), { version: 3, headerText: `{'${long}': 1, '${long}': 2}` }),
      npyFile('<f8', [1], f64([1]), { version: 2, headerText: `{'descr': '<f8', 'fortran_order': False, 'shape': (1,), '${long}': 1}` }),
    ];
    for (const file of cases) {
      try {
        await decodeNpy(file, NPY_MAX_ELEMENTS);
        expect.fail('accepted');
      } catch (err) {
        expect(err).to.be.instanceOf(ProblemError);
        expect((err as ProblemError).status).to.equal(400);
        expect((err as ProblemError).message.length, (err as ProblemError).message.slice(0, 200)).to.be.below(200);
      }
    }
  });

  it('writes version 1.0 headers, 64-byte aligned, that it reads back', async () => {
    for (const shape of [[], [5], [2, 3], [1, 2, 1, 2, 1, 2, 1, 2]]) {
      const h = encodeNpyHeader('int16', shape);
      expect(h.length % 64).to.equal(0);
      expect(h[6]).to.equal(1);
      const n = shape.reduce((a, b) => a * b, 1);
      const file = encodeNpy('int16', shape, Buffer.alloc(2 * n, 3));
      const parsed = parseNpyHeader(file, NPY_MAX_ELEMENTS);
      expect(parsed).to.include({ dtype: 'int16', fortran: false, swap: false, dataOffset: h.length });
      expect(parsed.shape).to.deep.equal(shape);
    }
    expect(encodeNpyHeader('bool', [3]).toString('latin1')).to.include("'descr': '|b1'");
  });

  it('treats bytes without the magic, and octet-stream bodies, as uint8 blobs', async () => {
    const raw = Buffer.from('hello world');
    const p = await decodePayload(raw, NPY_MAX_ELEMENTS);
    expect(p).to.include({ kind: 'blob', dtype: 'uint8' });
    expect(p.shape).to.deep.equal([11]);
    const npy = npyFile('<f8', [1], f64([1]));
    expect((await decodePayload(Buffer.from(npy), NPY_MAX_ELEMENTS, true)).kind).to.equal('blob');
    expect((await decodePayload(Buffer.from(npy), NPY_MAX_ELEMENTS)).kind).to.equal('array');
  });
});

describe('strict base64', () => {
  it('decodes standard base64 with or without padding', () => {
    expect(decodeBase64Strict('aGVsbG8=', 'x').toString()).to.equal('hello');
    expect(decodeBase64Strict('aGVsbG8', 'x').toString()).to.equal('hello');
    expect(decodeBase64Strict('', 'x').length).to.equal(0);
  });
  it('decodes a string given in pieces as the whole: the same bytes, and as strict at every place', () => {
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i += 4093) bytes[i] = i % 251;
    const text = bytes.toString('base64');
    /** The string in pieces of `size` characters (the raw offsets are the characters' own). */
    const pieces = (s: string, size: number) => {
      const dec = new Base64Decoder(Buffer.alloc(s.length), 0);
      let failed = -1;
      for (let at = 0; at < s.length; at += size) {
        const from = dec.push(s.slice(at, at + size), at, Math.min(s.length, at + size));
        if (from >= 0 && failed < 0) failed = from;
      }
      const { data, failedFrom } = dec.finish();
      return { data, failed: failed >= 0 ? failed : failedFrom };
    };
    for (const size of [1, 3, 4, 5, 4096, 16_385, 1 << 20]) {
      const whole = pieces(text, size);
      expect(whole.data.bytes('data_b64').equals(bytes), `pieces of ${size}`).to.equal(true);
      expect(whole.data.impliedLength).to.equal(bytes.length);
      expect(pieces(text.replace(/=+$/, ''), size).data.bytes('data_b64').equals(bytes)).to.equal(true);
    }
    const strictly = (s: string): Buffer | null => {
      try {
        return decodeBase64Strict(s, 'x');
      } catch {
        return null;
      }
    };
    const mutated = [`${text}A`, `${text}A==`, 'a', 'aGVsbG8==', 'aG=sbG8=', 'aGVsbG8=', ''];
    for (const at of [0, 5, 20_000, 200_001, text.length - 3, text.length - 2, text.length - 1]) {
      for (const bad of ['-', '_', '!', '=', ' ', '\n', '\u00e9']) mutated.push(text.slice(0, at) + bad + text.slice(at + 1));
    }
    for (const s of mutated) {
      const strict = strictly(s);
      for (const size of [1, 7, 16_384, 1 << 20]) {
        const label = `${JSON.stringify(s.slice(-12))} of ${s.length}, pieces of ${size}`;
        const { data, failed } = pieces(s, size);
        expect(data.valid, label).to.equal(strict !== null);
        expect(data.impliedLength, label).to.equal(base64DecodedLength(s));
        if (strict) {
          expect(data.bytes('x').equals(strict), label).to.equal(true);
        } else {
          // Where the string failed, the bytes not yet proven base64 start at or before its first bad character.
          const firstBad = s.search(/[^A-Za-z0-9+/]/);
          expect(failed, label).to.be.within(0, firstBad < 0 ? s.length : firstBad);
          expect(() => data.bytes('data_b64')).to.throw(/data_b64 is not valid base64/);
        }
      }
    }
  });

  it('rejects characters outside the alphabet, bad lengths and misplaced padding', async () => {
    for (const bad of ['not base64!!', 'aGVs bG8=', 'a', 'aGVsbG8==', 'aG=sbG8=', 'aGVs\nbG8=', 'ab-_']) {
      await rejects400(() => decodeBase64Strict(bad, 'data_b64'), /data_b64/);
    }
  });
});
