import { expect } from 'chai';

import { engine, engineTestCalls } from '../../src/engine/index.js';
import type { TensorTrain } from '../../src/engine/index.js';
import { denseModeOrder, dotDense, maxRank, randomTrain, relDiff } from './helpers.js';

// a + b as a TT with ranks r_a + r_b (block cores): redundant, so rounding can shrink it.
function sumTrain(a: TensorTrain, b: TensorTrain): TensorTrain {
  const d = a.modes.length;
  const ranks = a.ranks.map((r, k) => (k === 0 || k === d ? 1 : r + b.ranks[k]!));
  const cores = a.modes.map((n, k) => {
    const [ra0, ra1, rb0, rb1] = [a.ranks[k]!, a.ranks[k + 1]!, b.ranks[k]!, b.ranks[k + 1]!];
    const [r0, r1] = [ranks[k]!, ranks[k + 1]!];
    const c = new Float64Array(r0 * n * r1);
    const rowB = k === 0 ? 0 : ra0; // first core: a and b side by side
    const colB = k === d - 1 ? 0 : ra1; // last core: a over b
    for (let i = 0; i < n; i++) {
      for (let x = 0; x < ra0; x++) for (let y = 0; y < ra1; y++) c[(x * n + i) * r1 + y] = a.cores[k]![(x * n + i) * ra1 + y]!;
      for (let x = 0; x < rb0; x++) {
        for (let y = 0; y < rb1; y++) c[((rowB + x) * n + i) * r1 + colB + y]! += b.cores[k]![(x * n + i) * rb1 + y]!;
      }
    }
    return c;
  });
  return { modes: [...a.modes], ranks, cores };
}

describe('engine: round', function () {
  const modes = [2, 2, 3, 2, 2, 5, 2, 2];
  const a = randomTrain(modes, [1, 2, 4, 3, 3, 4, 3, 2, 1], 21);
  const da = denseModeOrder(a);
  const normA = Math.sqrt(dotDense(da, da));

  it('shrinks a redundant TT (a + a) back to the ranks of a, within the tolerance', async function () {
    const twice = sumTrain(a, a);
    expect(relDiff(dotDense(denseModeOrder(twice), da), 2 * normA * normA)).to.be.below(1e-12);
    const r = await engineTestCalls.round(twice, { tolerance: 1e-10 });
    expect(r.modes).to.deep.equal(modes);
    r.ranks.forEach((rank, k) => expect(rank, `bond ${k}`).to.be.at.most(a.ranks[k]!));
    r.cores.forEach((c) => expect(c).to.be.instanceOf(Float64Array));
    const dr = denseModeOrder(r);
    const diff = dr.map((v, i) => v - 2 * da[i]!);
    expect(Math.sqrt(dotDense(diff, diff))).to.be.at.most(1e-10 * 2 * normA * 1.0001);
  });

  it('meets a loose tolerance with lower ranks and keeps the error under it', async function () {
    const b = randomTrain(modes, [1, 2, 2, 2, 2, 2, 2, 2, 1], 22);
    const noisy = sumTrain(a, { ...b, cores: b.cores.map((c) => c.map((v) => v * 1e-3)) as Float64Array[] });
    const r = await engineTestCalls.round(noisy, { tolerance: 1e-2 });
    expect(maxRank(r)).to.be.at.most(maxRank(noisy));
    const dn = denseModeOrder(noisy);
    const dr = denseModeOrder(r);
    const diff = dr.map((v, i) => v - dn[i]!);
    expect(Math.sqrt(dotDense(diff, diff))).to.be.at.most(1e-2 * Math.sqrt(dotDense(dn, dn)));
  });

  it('caps every bond dimension at maxRank', async function () {
    const r = await engineTestCalls.round(a, { tolerance: 0, maxRank: 2 });
    expect(maxRank(r)).to.be.at.most(2);
    expect(await engine.norm(r)).to.be.at.most(normA * (1 + 1e-12));
  });
});
