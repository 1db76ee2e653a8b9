import { expect } from 'chai';

import { engine, engineTestCalls } from '../../src/engine/index.js';
import type { TensorTrain } from '../../src/engine/index.js';
import { denseModeOrder, dotDense, randomTrain, relDiff, sample1d } from './helpers.js';

const REL = 1e-10;

function toF32(tt: TensorTrain): TensorTrain {
  return { ...tt, cores: tt.cores.map((c) => Float32Array.from(c)) };
}

describe('engine: contractions on the cores', function () {
  const modes = [2, 3, 2, 5, 2, 2, 3, 2];
  const a = randomTrain(modes, [1, 2, 4, 3, 5, 4, 3, 2, 1], 1);
  const b = randomTrain(modes, [1, 3, 2, 6, 2, 3, 4, 3, 1], 2);
  const da = denseModeOrder(a);
  const db = denseModeOrder(b);

  it('dot, norm and distance of hand-built float64 TTs agree with the dense values to 1e-10', async function () {
    expect(relDiff(await engineTestCalls.dot(a, b), dotDense(da, db))).to.be.below(REL);
    expect(relDiff(await engine.norm(a), Math.sqrt(dotDense(da, da)))).to.be.below(REL);
    const diff = da.map((v, i) => v - db[i]!);
    expect(relDiff(await engineTestCalls.distance(a, b), Math.sqrt(dotDense(diff, diff)))).to.be.below(REL);
    expect(await engineTestCalls.distance(a, a))
      .to.be.at.least(0)
      .and.below(1e-6 * Math.sqrt(dotDense(da, da)));
  });

  it('dot, norm and distance of compressed fields (tol 1e-9, float64 cores) agree with their dense values', async function () {
    const n = 2 ** 16;
    const f = await engine.compress(
      sample1d(n, (x) => Math.sin(30 * x) + x * x),
      'float64',
      [n],
      { tolerance: 1e-9 },
    );
    const g = await engine.compress(
      sample1d(n, (x) => Math.exp(-x) * Math.cos(17 * x)),
      'float64',
      [n],
      { tolerance: 1e-9 },
    );
    expect(f.tt.cores[0]).to.be.instanceOf(Float64Array);
    const df = denseModeOrder(f.tt);
    const dg = denseModeOrder(g.tt);
    expect(relDiff(await engineTestCalls.dot(f.tt, g.tt), dotDense(df, dg))).to.be.below(REL);
    expect(relDiff(await engine.norm(f.tt), Math.sqrt(dotDense(df, df)))).to.be.below(REL);
    const diff = df.map((v, i) => v - dg[i]!);
    expect(relDiff(await engineTestCalls.distance(f.tt, g.tt), Math.sqrt(dotDense(diff, diff)))).to.be.below(REL);
  });

  it('dotBatch gives <q, c_j> for every candidate in order, as a Float64Array', async function () {
    const cands = [b, a, randomTrain(modes, [1, 1, 1, 1, 1, 1, 1, 1, 1], 3), randomTrain(modes, [1, 4, 4, 4, 4, 4, 4, 4, 1], 4)];
    const got = await engineTestCalls.dotBatch(a, cands);
    expect(got).to.be.instanceOf(Float64Array);
    expect(got.length).to.equal(cands.length);
    cands.forEach((c, j) => expect(relDiff(got[j]!, dotDense(da, denseModeOrder(c))), `candidate ${j}`).to.be.below(REL));
    expect((await engineTestCalls.dotBatch(a, [])).length).to.equal(0);
  });

  it('accepts float32 cores (the arithmetic is float64)', async function () {
    const a32 = toF32(a);
    const d32 = denseModeOrder(a32);
    expect(relDiff(await engine.norm(a32), Math.sqrt(dotDense(d32, d32)))).to.be.below(REL);
    expect(relDiff(await engineTestCalls.dot(a32, b), dotDense(d32, db))).to.be.below(REL);
  });

  it('rejects TTs whose modes differ, naming both', async function () {
    const c = randomTrain([2, 3, 2, 5, 2, 2, 2, 3], [1, 2, 2, 2, 2, 2, 2, 2, 1], 5);
    for (const call of [() => engineTestCalls.dot(a, c), () => engineTestCalls.distance(a, c), () => engineTestCalls.dotBatch(a, [b, c])]) {
      const err = await call().then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
      );
      expect(err).to.be.instanceOf(RangeError);
      expect(err!.code).to.equal('ERR_TTS_INVALID');
      expect(err!.message).to.contain('[2,3,2,5,2,2,3,2]').and.contain('[2,3,2,5,2,2,2,3]');
    }
  });

  it('an operand pool scores many candidates in one call, and a running score survives removals and replacements', async function () {
    const pool = engine.createOperandPool();
    const cands = Array.from({ length: 400 }, (_, j) =>
      randomTrain(
        modes,
        [1, 2, 4, 3, 5, 4, 3, 2, 1].map((r, k) => (k === 0 || k === 8 ? 1 : 1 + ((r + j) % 4))),
        100 + j,
      ),
    );
    await pool.addTrain(1, a);
    for (let j = 0; j < cands.length; j++) await pool.addTrain(10 + j, j % 3 ? cands[j]! : toF32(cands[j]!));
    const ids = Float64Array.from(cands, (_, j) => 10 + j);
    const want = cands.map((c, j) => dotDense(da, denseModeOrder(j % 3 ? c : toF32(c))));
    const running = pool.score(1, 1, ids, new Float64Array(ids.length).fill(1), 'dot');
    for (let j = 0; j < cands.length; j += 2) pool.remove(10 + j);
    const replaced = pool.addTrain(11, b);
    const got = await running;
    await replaced;
    want.forEach((w, j) => expect(relDiff(got[j]!, w), `candidate ${j}`).to.be.below(REL));
    expect(pool.stats().entries).to.equal(1 + cands.length / 2);
    expect(relDiff((await pool.score(1, 1, Float64Array.of(11), Float64Array.of(1), 'dot'))[0]!, dotDense(da, db))).to.be.below(REL);
    const missing = await pool.score(1, 1, Float64Array.of(10), Float64Array.of(1), 'dot').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(missing).to.be.instanceOf(RangeError);
  });
});
