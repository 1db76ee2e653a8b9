import { expect } from 'chai';

import { engine, engineTestCalls } from '../../src/engine/index.js';
import type { TensorTrain } from '../../src/engine/index.js';
import { sample1d } from './helpers.js';

type Coded = Error & { code?: string };

// Calls the engine with deliberately wrong arguments (the types are the point of the test).
const loose = engine as any;

async function rejection(p: () => Promise<unknown>): Promise<Coded> {
  let settled: Promise<unknown>;
  try {
    settled = p();
  } catch (e) {
    throw new Error(`threw synchronously instead of rejecting: ${String(e)}`);
  }
  return settled.then(
    () => {
      throw new Error('resolved, expected a rejection');
    },
    (e: unknown) => e as Coded,
  );
}

async function expectInvalid(
  p: () => Promise<unknown>,
  kind: ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor,
  ...fragments: string[]
): Promise<void> {
  const err = await rejection(p);
  expect(err, err.message).to.be.instanceOf(kind);
  expect(err.code).to.equal('ERR_TTS_INVALID');
  for (const f of fragments) expect(err.message).to.contain(f);
}

describe('engine: bad input is a clear JS error, never a crash', function () {
  const n = 64;
  const x = sample1d(n, (t) => t);
  const good: TensorTrain = { modes: [3], ranks: [1, 1], cores: [Float64Array.from([1, 2, 3])] };

  it('rejects data that is not an ArrayBufferView', async function () {
    await expectInvalid(() => loose.compress('abc', 'float64', [n], { tolerance: 1e-3 }), TypeError, 'data');
    await expectInvalid(() => loose.compress([1, 2, 3], 'float64', [3], { tolerance: 1e-3 }), TypeError, 'data');
    await expectInvalid(() => loose.compress(x.buffer, 'float64', [n], { tolerance: 1e-3 }), TypeError, 'data');
  });

  it('rejects an unknown dtype, naming the valid ones', async function () {
    await expectInvalid(() => loose.compress(x, 'float128', [n], { tolerance: 1e-3 }), TypeError, "'float128'", 'float64', 'bool');
    await expectInvalid(() => loose.compress(x, 8, [n], { tolerance: 1e-3 }), TypeError, 'dtype');
  });

  it('rejects a bad shape', async function () {
    await expectInvalid(() => loose.compress(x, 'float64', 64, { tolerance: 1e-3 }), TypeError, 'shape');
    await expectInvalid(() => loose.compress(x, 'float64', [0, 64], { tolerance: 1e-3 }), RangeError, 'shape[0]');
    await expectInvalid(() => loose.compress(x, 'float64', [-64], { tolerance: 1e-3 }), RangeError, 'shape[0]');
    await expectInvalid(() => loose.compress(x, 'float64', [6.5], { tolerance: 1e-3 }), TypeError, 'shape[0]');
    await expectInvalid(() => loose.compress(x, 'float64', ['64'], { tolerance: 1e-3 }), TypeError, 'shape[0]');
    await expectInvalid(() => loose.compress(x, 'float64', [1, 2, 1, 2, 1, 2, 1, 2, 4], { tolerance: 1e-3 }), RangeError, '9 axes');
  });

  it('rejects data whose length does not match the shape, with both sizes', async function () {
    const d = new Uint8Array(100);
    await expectInvalid(
      () => engine.compress(d, 'float64', [3, 4], { tolerance: 1e-3 }),
      RangeError,
      'data has 100 bytes but shape [3,4] of float64 needs 96',
    );
  });

  it('rejects a tolerance outside [0, 1) and a rank cap outside 1..4096', async function () {
    for (const tolerance of [1, -0.1, NaN, Infinity]) {
      await expectInvalid(() => engine.compress(x, 'float64', [n], { tolerance }), RangeError, 'tolerance');
    }
    await expectInvalid(() => loose.compress(x, 'float64', [n], { tolerance: '1e-3' }), TypeError, 'tolerance');
    await expectInvalid(() => loose.compress(x, 'float64', [n]), TypeError, 'options');
    await expectInvalid(() => engine.compress(x, 'float64', [n], { tolerance: 1e-3, maxRank: 0 }), RangeError, 'maxRank', '0');
    await expectInvalid(() => engine.compress(x, 'float64', [n], { tolerance: 1e-3, maxRank: 4097 }), RangeError, 'maxRank');
    await expectInvalid(() => engine.compress(x, 'float64', [n], { tolerance: 1e-3, maxRank: 2.5 }), TypeError, 'maxRank');
    await expectInvalid(() => engineTestCalls.round(good, { tolerance: 1e-3, maxRank: 0 }), RangeError, 'maxRank');
    await expectInvalid(() => loose.compress(x, 'float64', [n], { tolerance: 1e-3, layout: 'zigzag' }), TypeError, 'layout');
  });

  it("rejects NaN or Inf in the data from the worker, with the core's message", async function () {
    for (const bad of [NaN, Infinity, -Infinity]) {
      const y = Float64Array.from(x);
      y[17] = bad;
      const err = await rejection(() => engine.compress(y, 'float64', [n], { tolerance: 1e-3 }));
      expect(err.code).to.equal('ERR_TTS_INVALID');
      expect(err).to.be.instanceOf(RangeError);
      expect(err.message.length).to.be.greaterThan(0);
    }
    const h = new Uint16Array(n).fill(0x3c00);
    h[3] = 0x7e00; // float16 NaN
    await expectInvalid(() => engine.compress(h, 'float16', [n], { tolerance: 1e-3 }), RangeError);
  });

  it('rejects malformed tensor trains', async function () {
    const bad: [unknown, ErrorConstructor | RangeErrorConstructor | TypeErrorConstructor, string][] = [
      [null, TypeError, 'tensor train'],
      [{ modes: [3], ranks: [1, 1] }, TypeError, 'cores'],
      [{ modes: [3], ranks: [1, 2, 1], cores: [new Float64Array(3)] }, RangeError, 'ranks'],
      [{ modes: [3], ranks: [2, 2], cores: [new Float64Array(12)] }, RangeError, 'start and end with 1'],
      [{ modes: [3], ranks: [1, 1], cores: [new Float64Array(4)] }, RangeError, 'needs 3'],
      [{ modes: [3], ranks: [1, 1], cores: [new Int32Array(3)] }, TypeError, 'Float32Array or Float64Array'],
      [{ modes: [1, 3], ranks: [1, 1, 1], cores: [new Float64Array(1), new Float32Array(3)] }, TypeError, 'mixes'],
      [{ modes: [0], ranks: [1, 1], cores: [new Float64Array(0)] }, RangeError, 'modes[0]'],
    ];
    for (const [tt, kind, fragment] of bad) {
      await expectInvalid(() => loose.norm(tt), kind, fragment);
      await expectInvalid(() => loose.reconstruct(tt, [3], 'row_major', 'float64'), kind, fragment);
    }
  });

  it('rejects NaN in a core from the worker', async function () {
    const tt: TensorTrain = { modes: [3], ranks: [1, 1], cores: [Float64Array.from([1, NaN, 3])] };
    await expectInvalid(() => engine.norm(tt), RangeError);
    await expectInvalid(() => engine.reconstruct(tt, [3], 'row_major', 'float64'), RangeError);
  });

  it('rejects a TT whose modes do not fit the shape and layout, and a reference of the wrong size', async function () {
    await expectInvalid(() => engine.reconstruct(good, [4], 'row_major', 'float64'), RangeError, 'tt.modes [3]', '[2,2]');
    await expectInvalid(() => loose.reconstruct(good, [3], 'diagonal', 'float64'), TypeError, 'layout');
    await expectInvalid(
      () => engine.reconstruct(good, [3], 'row_major', 'float64', new Float64Array(4)),
      RangeError,
      'reference has 32 bytes but shape [3] of float64 needs 24',
    );
    await expectInvalid(() => engine.fingerprint(good, [3], 'row_major', new Float32Array(3), 'float64'), RangeError, 'reference');
  });

  it('throws synchronously from layoutFor and setThreads-free sync calls with the same codes', function () {
    expect(() => loose.layoutFor('nope'))
      .to.throw(TypeError)
      .with.property('code', 'ERR_TTS_INVALID');
    expect(() => engine.layoutFor([0]))
      .to.throw(RangeError)
      .with.property('code', 'ERR_TTS_INVALID');
    expect(() => loose.layoutFor([4], 'zigzag')).to.throw(TypeError, 'layout');
  });

  it('keeps working after all of that', async function () {
    const res = await engine.compress(x, 'float64', [n], { tolerance: 1e-6 });
    expect(res.fingerprint.relative_error).to.be.at.most(1e-6);
  });
});
