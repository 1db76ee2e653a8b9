import { expect } from 'chai';

import { engine } from '../../src/engine/index.js';
import type { DType, TensorTrain } from '../../src/engine/index.js';
import { castBytes, denseArray, fromFloat64, jsFingerprint, jsLayout, randomTrain, relDiff, sampleGrid, toFloat64 } from './helpers.js';

// One core holding the values themselves: shape [n] with n odd is the single mode [n].
function valuesTrain(values: number[]): TensorTrain {
  return { modes: [values.length], ranks: [1, 1], cores: [Float64Array.from(values)] };
}

async function expectRejects(p: Promise<unknown>, kind: new (...a: never[]) => Error, fragment: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'rejected').to.be.instanceOf(kind);
  expect((err as Error).message).to.include(fragment);
}

describe('engine: reconstruct and fingerprint', function () {
  it('rebuilds the C-order array of a TT in both layouts, as the contract maps modes to indices', async function () {
    const shape = [12, 20, 6];
    for (const layout of ['row_major', 'interleaved'] as const) {
      const { modes } = jsLayout(shape, layout);
      const ranks = [1, ...modes.slice(1).map((_, k) => 2 + (k % 3)), 1];
      const tt = randomTrain(modes, ranks, 11);
      const out = await engine.reconstruct(tt, shape, layout, 'float64');
      expect(out.fingerprint).to.equal(undefined);
      const y = toFloat64(out.data, 'float64');
      const want = denseArray(tt, shape, layout);
      const scale = Math.max(...want.map(Math.abs));
      want.forEach((v, i) => expect(Math.abs(v - y[i]!), `${layout} element ${i}`).to.be.at.most(1e-12 * scale));
    }
  });

  it('returns a fresh Uint8Array of numel * item size bytes', async function () {
    const tt = valuesTrain([1, 2, 3, 4, 5]);
    const out = await engine.reconstruct(tt, [5], 'row_major', 'int32');
    expect(out.data).to.be.instanceOf(Uint8Array);
    expect(out.data.byteLength).to.equal(20);
    expect(Array.from(toFloat64(out.data, 'int32'))).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('writes into a given buffer and hands that same buffer back, equal to a fresh reconstruction', async function () {
    const shape = [12, 20, 6];
    const { modes } = jsLayout(shape, 'row_major');
    const tt = randomTrain(modes, [1, ...modes.slice(1).map(() => 3), 1], 5);
    const fresh = await engine.reconstruct(tt, shape, 'row_major', 'float32');
    const out = Buffer.alloc(12 * 20 * 6 * 4, 0xab);
    const into = await engine.reconstruct(tt, shape, 'row_major', 'float32', undefined, out);
    expect(into.data).to.equal(out);
    expect(Buffer.compare(out, Buffer.from(fresh.data.buffer, fresh.data.byteOffset, fresh.data.byteLength))).to.equal(0);
    // With a reference too: the fingerprint is measured on what was written.
    const x = Buffer.from(fresh.data.buffer, fresh.data.byteOffset, fresh.data.byteLength);
    const withRef = await engine.reconstruct(tt, shape, 'row_major', 'float32', x, Buffer.alloc(out.length));
    expect(withRef.fingerprint).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
  });

  it('refuses a given buffer of the wrong size, of another type, or overlapping the reference', async function () {
    const tt = valuesTrain([1, 2, 3]);
    const ref = new Float64Array(3);
    await expectRejects(engine.reconstruct(tt, [3], 'row_major', 'float64', undefined, Buffer.alloc(23)), RangeError, 'out has 23 bytes');
    await expectRejects(
      engine.reconstruct(tt, [3], 'row_major', 'float64', undefined, new Float64Array(3) as unknown as Uint8Array),
      TypeError,
      'Uint8Array',
    );
    const shared = Buffer.from(ref.buffer, 0, 24);
    await expectRejects(engine.reconstruct(tt, [3], 'row_major', 'float64', ref, shared), RangeError, 'overlap');
  });

  it('rounds to integers half to even, saturates, and thresholds bool at 0.5', async function () {
    const v = [2.5, 3.5, -0.5, 300, -7, 0.49, 1e20, -1e20, 0.5];
    const tt = valuesTrain(v);
    const cases: [DType, number[]][] = [
      ['uint8', [2, 4, 0, 255, 0, 0, 255, 0, 0]],
      ['int8', [2, 4, 0, 127, -7, 0, 127, -128, 0]],
      ['int16', [2, 4, 0, 300, -7, 0, 32767, -32768, 0]],
      ['uint16', [2, 4, 0, 300, 0, 0, 65535, 0, 0]],
      ['int32', [2, 4, 0, 300, -7, 0, 2 ** 31 - 1, -(2 ** 31), 0]],
      ['bool', [1, 1, 0, 1, 0, 0, 1, 0, 1]],
    ];
    for (const [dtype, want] of cases) {
      const out = await engine.reconstruct(tt, [v.length], 'row_major', dtype);
      expect(Array.from(toFloat64(out.data, dtype)), dtype).to.deep.equal(want);
    }
  });

  it('measures the fingerprint against a reference in the same pass, equal to fingerprint()', async function () {
    const shape = [24, 40];
    const x = sampleGrid(shape, ([a, b]) => Math.sin(3 * a!) * Math.cos(2 * b!) + a! * b!);
    const res = await engine.compress(x, 'float64', shape, { tolerance: 1e-4 });
    const out = await engine.reconstruct(res.tt, shape, res.layout, 'float64', x);
    const fp = await engine.fingerprint(res.tt, shape, res.layout, x, 'float64');
    expect(out.fingerprint).to.deep.equal(fp);
    expect(fp).to.deep.equal(res.fingerprint);
    const js = jsFingerprint(x, toFloat64(out.data, 'float64'));
    expect(relDiff(js.frobenius_error, fp.frobenius_error)).to.be.below(1e-9);
    expect(relDiff(js.relative_error, fp.relative_error)).to.be.below(1e-9);
    expect(relDiff(js.max_abs_error, fp.max_abs_error)).to.be.below(1e-9);
  });

  it('measures the fingerprint after the cast to the reference dtype', async function () {
    const n = 999;
    const x = Array.from({ length: n }, (_, i) => (i % 7) * 10);
    const bytes = fromFloat64(x, 'int16');
    // Off by 0.3 everywhere: rounds back to the reference exactly.
    const tt = valuesTrain(x.map((v) => v + 0.3));
    const fp = await engine.fingerprint(tt, [n], 'row_major', bytes, 'int16');
    expect(fp).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
    // Off by 0.7: every element is one off.
    const fp2 = await engine.fingerprint(valuesTrain(x.map((v) => v + 0.7)), [n], 'row_major', bytes, 'int16');
    expect(fp2.max_abs_error).to.equal(1);
    expect(fp2.frobenius_error).to.be.closeTo(Math.sqrt(n), 1e-9);
    const y = toFloat64(
      castBytes(
        Float64Array.from(x, (v) => v + 0.7),
        'int16',
      ),
      'int16',
    );
    expect(fp2.relative_error).to.be.closeTo(jsFingerprint(x, y).relative_error, 1e-12);
  });

  it('gives relative_error 0 for an all-zero reference rebuilt exactly', async function () {
    const fp = await engine.fingerprint(valuesTrain([0, 0, 0]), [3], 'row_major', new Float64Array(3), 'float64');
    expect(fp).to.deep.equal({ frobenius_error: 0, max_abs_error: 0, relative_error: 0 });
  });

  it('accepts Float32Array cores', async function () {
    const tt: TensorTrain = { modes: [3], ranks: [1, 1], cores: [Float32Array.from([0.5, 1.5, 2.5])] };
    const out = await engine.reconstruct(tt, [3], 'row_major', 'float32');
    expect(Array.from(new Float32Array(out.data.buffer, out.data.byteOffset, 3))).to.deep.equal([0.5, 1.5, 2.5]);
  });
});
