import { expect } from 'chai';

import { engine } from '../../src/engine/index.js';
import { ticksDuring } from './helpers.js';

describe('engine: the event loop is not blocked', function () {
  const n = 2 ** 24;
  let data: Float32Array;

  before(function () {
    data = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const x = i / n;
      data[i] = Math.sin(20 * x) + 0.5 * Math.exp(-(((x - 0.4) / 0.05) ** 2));
    }
  });

  it('a 2^24-element compression runs while a 1 ms setInterval keeps firing on time', async function () {
    const { result, ticks, maxGapMs, ms } = await ticksDuring(() => engine.compress(data, 'float32', [n], { tolerance: 1e-6 }));
    expect(result.fingerprint.relative_error).to.be.at.most(1e-6);
    // Timers fire at most once a millisecond; with the event loop free most of them do.
    expect(ticks, `${ticks} ticks in ${ms.toFixed(0)} ms`).to.be.at.least(Math.min(ms / 4, 50));
    expect(maxGapMs, `longest gap ${maxGapMs.toFixed(1)} ms over ${ms.toFixed(0)} ms`).to.be.below(30);
  });

  it('so does a 2^24-element reconstruction into a fresh buffer', async function () {
    const res = await engine.compress(data, 'float32', [n], { tolerance: 1e-4 });
    const { result, maxGapMs, ms } = await ticksDuring(() => engine.reconstruct(res.tt, [n], res.layout, 'float32', data));
    expect(result.data.byteLength).to.equal(4 * n);
    expect(result.fingerprint!.relative_error).to.be.at.most(1e-4);
    expect(maxGapMs, `longest gap ${maxGapMs.toFixed(1)} ms over ${ms.toFixed(0)} ms`).to.be.below(30);
  });
});
