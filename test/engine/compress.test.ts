import { expect } from 'chai';

import { engine, ITEM_SIZE } from '../../src/engine/index.js';
import type { DType, LayoutName, TensorTrain } from '../../src/engine/index.js';
import { castBytes, denseArray, fromFloat64, jsFingerprint, jsLayout, maxRank, rng, sample1d, sampleGrid, toFloat64 } from './helpers.js';

function expectWellFormed(tt: TensorTrain): void {
  expect(tt.ranks).to.have.length(tt.modes.length + 1);
  expect(tt.ranks[0]).to.equal(1);
  expect(tt.ranks[tt.ranks.length - 1]).to.equal(1);
  expect(tt.cores).to.have.length(tt.modes.length);
  tt.cores.forEach((c, k) => expect(c.length).to.equal(tt.ranks[k]! * tt.modes[k]! * tt.ranks[k + 1]!));
}

function coreElements(tt: TensorTrain): number {
  return tt.cores.reduce((s, c) => s + c.length, 0);
}

// The engine's fingerprint agrees with one computed in JS from the returned cores.
function expectFingerprintAgrees(
  x: Float64Array,
  tt: TensorTrain,
  shape: number[],
  layout: LayoutName,
  dtype: DType,
  fp: { frobenius_error: number; max_abs_error: number; relative_error: number },
): void {
  const y = toFloat64(castBytes(denseArray(tt, shape, layout), dtype), dtype);
  const js = jsFingerprint(x, y);
  const norm = Math.sqrt(x.reduce((s, v) => s + v * v, 0));
  const slack = 1e-12 * norm + 1e-300;
  expect(Math.abs(js.frobenius_error - fp.frobenius_error)).to.be.at.most(1e-6 * js.frobenius_error + slack);
  expect(Math.abs(js.max_abs_error - fp.max_abs_error)).to.be.at.most(1e-6 * js.max_abs_error + slack);
  expect(Math.abs(js.relative_error - fp.relative_error)).to.be.at.most(1e-6 * js.relative_error + slack / norm);
}

describe('engine: compress', function () {
  it('finds rank 1 for exp(x) and rank 2 for sin(x) on 2^20 points', async function () {
    const n = 2 ** 20;
    const e = await engine.compress(sample1d(n, Math.exp), 'float64', [n], { tolerance: 1e-6 });
    expect(e.layout).to.equal('row_major');
    expect(e.tt.modes).to.deep.equal(new Array(20).fill(2));
    expect(maxRank(e.tt)).to.equal(1);
    expect(e.fingerprint.relative_error).to.be.at.most(1e-6);

    const s = await engine.compress(
      sample1d(n, (x) => Math.sin(10 * x)),
      'float64',
      [n],
      { tolerance: 1e-6 },
    );
    expect(maxRank(s.tt)).to.equal(2);
    expect(s.fingerprint.relative_error).to.be.at.most(1e-6);
    expect(s.compressible).to.equal(true);
  });

  it('meets the error target for every tolerance from 1e-2 to 1e-9, as measured independently', async function () {
    const n = 2 ** 16;
    const x = sample1d(n, (t) => Math.sin(40 * t) + 0.5 * Math.exp(-(((t - 0.3) / 0.02) ** 2)) + 0.3 * Math.tanh((t - 0.71) / 1e-2));
    let previousRank = 0;
    for (const tol of [1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9]) {
      const res = await engine.compress(x, 'float64', [n], { tolerance: tol });
      expectWellFormed(res.tt);
      expect(res.fingerprint.relative_error, `tol ${tol}`).to.be.at.most(tol);
      expectFingerprintAgrees(x, res.tt, [n], res.layout, 'float64', res.fingerprint);
      expect(maxRank(res.tt), `rank grows as tol shrinks (tol ${tol})`).to.be.at.least(previousRank);
      previousRank = maxRank(res.tt);
    }
  });

  it('reports stored core bytes from the core element type and says whether that is smaller', async function () {
    const n = 2 ** 14;
    const res = await engine.compress(
      sample1d(n, (t) => Math.cos(3 * t)),
      'float64',
      [n],
      { tolerance: 1e-4 },
    );
    const per = res.tt.cores[0] instanceof Float32Array ? 4 : 8;
    res.tt.cores.forEach((c) => expect(c.BYTES_PER_ELEMENT).to.equal(per));
    expect(res.storedCoreBytes).to.equal(coreElements(res.tt) * per);
    expect(res.compressible).to.equal(res.storedCoreBytes < n * 8);
    // A loose tolerance on smooth data is met by float32 cores (half the bytes).
    expect(per).to.equal(4);
  });

  it('says when the cores would not be smaller than the input (random data), and keeps no cores then', async function () {
    const n = 2 ** 14;
    const r = rng(5);
    const x = sample1d(n, () => r());
    const res = await engine.compress(x, 'float64', [n], { tolerance: 1e-6 });
    expect(res.compressible).to.equal(false);
    // The engine may stop as soon as the cores outgrow the input: then the train is empty.
    if (res.tt.cores.length === 0) {
      expect(res.storedCoreBytes).to.equal(0);
    } else {
      expect(res.storedCoreBytes).to.be.at.least(n * 8);
    }
  });

  it('honours maxRank', async function () {
    const n = 2 ** 14;
    const r = rng(3);
    const x = sample1d(n, () => r());
    const res = await engine.compress(x, 'float64', [n], { tolerance: 1e-6, maxRank: 3 });
    expect(maxRank(res.tt)).to.be.at.most(3);
    expect(res.fingerprint.relative_error).to.be.greaterThan(1e-6); // the cap, not the tolerance, decided
  });

  it('takes the input already converted to float64 (gathered) and gives the same train and fingerprint', async function () {
    const [rows, cols] = [96, 512]; // 96 = 3 * 2^5: an odd digit beside the bits
    const x = sampleGrid([rows, cols], ([u, v]) => Math.sin(3 * u! + 2 * v!) + Math.exp(-u!) * Math.cos(2 * v!));
    const f32 = Float32Array.from(x);
    const plain = await engine.compress(f32, 'float32', [rows, cols], { tolerance: 1e-6 });
    const gathered = Float64Array.from(f32);
    const pre = await engine.compress(f32, 'float32', [rows, cols], { tolerance: 1e-6, gathered });
    expect(pre.tt.ranks).to.deep.equal(plain.tt.ranks);
    pre.tt.cores.forEach((c, k) =>
      expect(
        Buffer.from(c.buffer, c.byteOffset, c.byteLength).equals(
          Buffer.from(plain.tt.cores[k]!.buffer, plain.tt.cores[k]!.byteOffset, plain.tt.cores[k]!.byteLength),
        ),
      ).to.equal(true),
    );
    expect(pre.fingerprint).to.deep.equal(plain.fingerprint);
  });

  it('widens any dtype to float64 at any offset, from unaligned bytes, and refuses bad ranges', async function () {
    const dst = new Float64Array(10).fill(-1);
    const raw = Buffer.alloc(1 + 3 * 4);
    Buffer.from(new Float32Array([1.5, -2.25, 3e38]).buffer).copy(raw, 1);
    await engine.widen(raw.subarray(1), 'float32', dst, 2);
    expect(Array.from(dst)).to.deep.equal([-1, -1, 1.5, -2.25, Math.fround(3e38), -1, -1, -1, -1, -1]);
    await engine.widen(new Int16Array([-7, 300]), 'int16', dst, 8);
    expect(Array.from(dst.subarray(8))).to.deep.equal([-7, 300]);
    await engine.widen(new Float64Array([0.1, 1e300]), 'float64', dst, 0);
    expect(Array.from(dst.subarray(0, 2))).to.deep.equal([0.1, 1e300]);
    const refused = (p: Promise<void>) =>
      p.then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
    const over = await refused(engine.widen(new Float32Array(3), 'float32', dst, 8));
    expect(over).to.be.instanceOf(RangeError).with.property('code', 'ERR_TTS_INVALID');
    const partial = await refused(engine.widen(new Uint8Array(6), 'float32', dst, 0));
    expect(partial).to.be.instanceOf(RangeError).with.property('message').that.contains('whole number');
  });

  it('refuses a gathered input of the wrong type, length or layout', async function () {
    const x = sample1d(256, (t) => t);
    const invalid = async (opts: object, kind: typeof TypeError | typeof RangeError, fragment: string) => {
      const err = await engine.compress(x, 'float64', [16, 16], { tolerance: 1e-6, ...opts } as never).then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      expect(err, fragment).to.be.instanceOf(kind);
      expect(err!.code).to.equal('ERR_TTS_INVALID');
      expect(err!.message).to.contain(fragment);
    };
    await invalid({ gathered: new Float32Array(256) }, TypeError, 'Float64Array');
    await invalid({ gathered: new Float64Array(255) }, RangeError, '255');
    await invalid({ gathered: new Float64Array(256), layout: 'interleaved' }, RangeError, 'row_major');
    await invalid({ gatheredSumSquares: 1 }, TypeError, 'needs options.gathered');
    await invalid({ gathered: Float64Array.from(x), gatheredSumSquares: '1' }, TypeError, 'must be a number');
    await invalid({ gathered: Float64Array.from(x), gatheredSumSquares: -1 }, RangeError, 'must not be negative');
  });

  it("adds each widened value's square to its lane, and refuses lanes that are not 16 float64s", async function () {
    const dst = new Float64Array(40);
    const lanes = new Float64Array(16);
    const src = Float32Array.from({ length: 40 }, (_, i) => i - 20.5);
    await engine.widen(src.subarray(0, 3), 'float32', dst, 0, lanes);
    await engine.widen(src.subarray(3), 'float32', dst, 3, lanes);
    const expected = new Float64Array(16);
    src.forEach((v, i) => {
      expected[i % 16]! += v * v;
    });
    expect(Array.from(lanes)).to.deep.equal(Array.from(expected));
    for (const bad of [new Float64Array(15), new Float32Array(16), [0, 0]]) {
      const err = await engine.widen(src, 'float32', dst, 0, bad as never).then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
      expect(err).to.be.instanceOf(Error).with.property('code', 'ERR_TTS_INVALID');
    }
  });

  describe('round trip of every dtype', function () {
    const n = 4096;
    // Exactly low-rank data (functions of the low and high six bits of the index, in range for each
    // dtype and exactly representable in it), so that at tol 1e-9 every dtype compresses and rounds back.
    const lo = (i: number): number => i % 64;
    const hi = (i: number): number => Math.floor(i / 64);
    const make = (f: (l: number, h: number) => number): Float64Array => Float64Array.from({ length: n }, (_, i) => f(lo(i), hi(i)));
    const values: Record<DType, Float64Array> = {
      float64: make((l, h) => 1e3 * Math.sin(l / 7) * Math.cos(h / 5) + l),
      float32: make((l, h) => l * 0.5 + h * 0.25),
      float16: make((l, h) => l + h * 0.5),
      int64: make((l, h) => 1e6 * (l - 32) + 1000 * h * l - 7),
      int32: make((l, h) => 1e5 * (l - 32) + h * l),
      int16: make((l, h) => 500 * (l - 32) + h),
      int8: make((l, h) => 2 * (l - 32) + (h >> 4)),
      uint64: make((l, h) => 1e6 * l + h * l),
      uint32: make((l, h) => 1e5 * l + h),
      uint16: make((l, h) => 1000 * l + h),
      uint8: make((l, h) => 3 * l + (h % 8)),
      bool: make((l, h) => (l >= 20 && h % 3 !== 0 ? 1 : 0)),
    };
    for (const dtype of Object.keys(values) as DType[]) {
      it(`${dtype}: reconstructs within the fingerprint, bit-exact for integers when max_abs_error < 0.5`, async function () {
        const x = values[dtype];
        const bytes = fromFloat64(x, dtype);
        expect(bytes.byteLength).to.equal(n * ITEM_SIZE[dtype]);
        const res = await engine.compress(bytes, dtype, [n], { tolerance: 1e-9 });
        expectFingerprintAgrees(x, res.tt, [n], res.layout, dtype, res.fingerprint);
        const back = await engine.reconstruct(res.tt, [n], res.layout, dtype, bytes);
        expect(back.data.byteLength).to.equal(bytes.byteLength);
        expect(back.fingerprint).to.deep.equal(res.fingerprint);
        const y = toFloat64(back.data, dtype);
        expect(jsFingerprint(x, y).max_abs_error).to.equal(back.fingerprint!.max_abs_error);
        expect(res.compressible).to.equal(true);
        expect(res.fingerprint.relative_error).to.be.at.most(1e-9);
        if (dtype !== 'float64' && dtype !== 'float32' && dtype !== 'float16') {
          // Integers are rounded after reconstruction: within 0.5 everywhere means bit-exact.
          expect(res.fingerprint.max_abs_error, 'integers land exactly at this tolerance').to.be.below(0.5);
          expect(Buffer.from(back.data).equals(Buffer.from(bytes)), 'bit-exact').to.equal(true);
        }
      });
    }
  });

  describe('shapes', function () {
    const smooth = (x: number[]): number =>
      x.reduce((s, v, j) => s + Math.sin((j + 1) * 2.1 * v + 0.3 * j), 1) + Math.exp(-x.reduce((s, v) => s + (v - 0.4) ** 2, 0));
    const shapes: number[][] = [
      [1],
      [3],
      [1009],
      [3, 1000, 7],
      [64],
      [32, 48],
      [8, 9, 10],
      [4, 5, 6, 7],
      [3, 4, 2, 5, 6],
      [2, 3, 4, 2, 3, 4],
      [2, 2, 3, 2, 5, 2, 3],
      [2, 3, 2, 2, 3, 2, 2, 3],
    ];
    for (const shape of shapes) {
      it(`[${shape.join(',')}]: both layouts give the contract's modes and round-trip within tolerance`, async function () {
        const x = sampleGrid(shape, smooth);
        for (const layout of ['row_major', 'interleaved'] as const) {
          const expected = jsLayout(shape, layout).modes;
          expect(engine.layoutFor(shape, layout)).to.deep.equal({ layout, modes: expected });
          const res = await engine.compress(x, 'float64', shape, { tolerance: 1e-6, layout });
          expect(res.layout).to.equal(layout);
          expect(res.tt.modes).to.deep.equal(expected);
          expectWellFormed(res.tt);
          expect(res.fingerprint.relative_error).to.be.at.most(1e-6);
          expectFingerprintAgrees(x, res.tt, shape, layout, 'float64', res.fingerprint);
        }
      });
    }

    it('lays out a shape before any data is seen in row_major (an uncompressed entry) and gives interleaved on request', function () {
      expect(engine.layoutFor([1024]).layout).to.equal('row_major');
      expect(engine.layoutFor([64, 64]).layout).to.equal('row_major');
      expect(engine.layoutFor([8, 8, 8]).layout).to.equal('row_major');
      expect(engine.layoutFor([64, 64], 'interleaved').layout).to.equal('interleaved');
    });

    // The fields: a front running across the axes (interleaved's), a separable smooth field
    // and a Gaussian bump (row_major's). 512^2 is decided by the coarse probe, 128^2 by two sweeps.
    const FIELDS: Array<[string, (x: number, y: number) => number]> = [
      ['diagonal front', (x, y) => Math.tanh((x - y) / 0.01)],
      ['separable smooth field', (x, y) => Math.sin(3 * x) * Math.cos(5 * y) + 0.5 * Math.exp(x) * y * y],
      ['Gaussian bump', (x, y) => Math.exp(-((x - 0.4) ** 2 + (y - 0.55) ** 2) / (2 * 0.1 ** 2))],
    ];
    const storedBytes = (r: { compressible: boolean; storedCoreBytes: number }, input: number) =>
      r.compressible ? r.storedCoreBytes : input;
    for (const n of [512, 128]) {
      for (const [name, f] of FIELDS) {
        it(`${name} ${n}^2: with no layout given, the chosen one stores within 5% of the better forced layout`, async function () {
          this.timeout(60000);
          const shape = [n, n];
          const x = new Float32Array(sampleGrid(shape, (u) => f(u[0]!, u[1]!)));
          for (const tolerance of [1e-3, 1e-6]) {
            const chosen = await engine.compress(x, 'float32', shape, { tolerance });
            const forced = await Promise.all(
              (['row_major', 'interleaved'] as const).map((layout) => engine.compress(x, 'float32', shape, { tolerance, layout })),
            );
            const best = Math.min(...forced.map((r) => storedBytes(r, x.byteLength)));
            expect(storedBytes(chosen, x.byteLength), `${name} at ${tolerance} in ${chosen.layout}`).to.be.at.most(1.05 * best);
            if (chosen.compressible) {
              expect(chosen.tt.modes).to.deep.equal(engine.layoutFor(shape, chosen.layout).modes);
              expect(chosen.fingerprint.relative_error).to.be.at.most(tolerance);
            }
          }
        });
      }
    }
  });

  describe('input views', function () {
    const n = 1024;
    const x = sample1d(n, (t) => Math.cos(7 * t));
    it('reads a Buffer, a TypedArray at an offset and a DataView in place, with the same result', async function () {
      const plain = await engine.compress(x, 'float64', [n], { tolerance: 1e-8 });
      const big = new Float64Array(n + 3);
      big.set(x, 3);
      const views: ArrayBufferView[] = [
        Buffer.from(x.buffer, x.byteOffset, x.byteLength),
        big.subarray(3),
        new DataView(big.buffer, 3 * 8, n * 8),
        new Uint8Array(big.buffer, 3 * 8, n * 8),
      ];
      for (const view of views) {
        const res = await engine.compress(view, 'float64', [n], { tolerance: 1e-8 });
        expect(res.tt.ranks).to.deep.equal(plain.tt.ranks);
        expect(res.fingerprint).to.deep.equal(plain.fingerprint);
      }
    });

    it('reads data at an offset that is not a multiple of the item size', async function () {
      const raw = new Uint8Array(n * 8 + 1);
      raw.set(new Uint8Array(x.buffer), 1);
      const res = await engine.compress(raw.subarray(1), 'float64', [n], { tolerance: 1e-8 });
      expect(res.fingerprint.relative_error).to.be.at.most(1e-8);
    });
  });
});
