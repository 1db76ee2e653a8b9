// A query's scoring in bounded turns (CONTRACT.md section 8): chunks of bounded estimated work, each
// in its own turn, with exactly the scores of one pass, and another tenant's engine work let in
// between two chunks.
import { expect } from 'chai';
import { EngineAdmission, type Turn } from '../../src/admission/engine-admission.js';
import { engine, type TensorTrain } from '../../src/engine/index.js';
import { MAX_TRAIN_WORK, MAX_TURN_WORK } from '../../src/engine/limits.js';
import { METRICS, type Metric, type OperandPool } from '../../src/engine/types.js';
import { chunkEnds, scoreInTurns } from '../../src/query/score-turns.js';
import { randomTrain } from '../engine/helpers.js';

/** float32 cores of the same values (candidates are stored either way). */
function toF32(tt: TensorTrain): TensorTrain {
  return { modes: tt.modes, ranks: tt.ranks, cores: tt.cores.map((c) => Float32Array.from(c)) };
}

/** A pool that records the ids of every score() call (its chunks), in order. */
function recording(pool: OperandPool, onScore: (ids: number[]) => void = () => {}): { pool: OperandPool; chunks: number[][] } {
  const chunks: number[][] = [];
  return {
    chunks,
    pool: {
      ...pool,
      scoreWork: (q, ids, metric) => pool.scoreWork(q, ids, metric),
      score: (q, norm, ids, norms, metric) => {
        chunks.push(Array.from(ids));
        onScore(Array.from(ids));
        return pool.score(q, norm, ids, norms, metric);
      },
    },
  };
}

describe('query: scoring in bounded turns', function () {
  this.timeout(60000);

  describe('chunkEnds', () => {
    it('cuts before the candidate that would pass the bound, and a chunk holds at least one', () => {
      expect(chunkEnds([], 10)).to.deep.equal([]);
      expect(chunkEnds([3, 3, 3, 3], 10)).to.deep.equal([3, 4]);
      expect(chunkEnds([5, 5, 5], 10)).to.deep.equal([2, 3]);
      expect(chunkEnds([25, 1, 1, 30, 2], 10)).to.deep.equal([1, 3, 4, 5]);
      expect(chunkEnds([0, 0, 0], 0)).to.deep.equal([3]);
      expect(chunkEnds([1, 2, 3], Infinity)).to.deep.equal([3]);
    });
  });

  // 2^14 values as 14 modes of 2 (the row_major split of shape [16384]), so trains and an array
  // held uncompressed contract with each other.
  const shape = [16384];
  const modes = new Array<number>(14).fill(2);
  const capped = (r: number) => [1, ...Array.from({ length: 13 }, (_, k) => Math.min(r, 2 ** (k + 1), 2 ** (13 - k))), 1];
  const q = randomTrain(modes, capped(8), 1);
  // Ranks of every kind score_batch treats apart: rank <= 8 pairs of equal ranks (run two at a time),
  // float32 and float64, the loop kernels up to 64, BLAS above, an array, and near duplicates of q.
  const cands: Array<{ tt?: TensorTrain; dense?: Float64Array }> = [
    ...Array.from({ length: 6 }, (_, j) => ({
      tt: j % 2 ? toF32(randomTrain(modes, capped(8), 10 + j)) : randomTrain(modes, capped(8), 10 + j),
    })),
    { tt: randomTrain(modes, capped(4), 20) },
    { tt: q },
    { tt: toF32(randomTrain(modes, capped(24), 21)) },
    { tt: randomTrain(modes, capped(24), 22) },
    { dense: Float64Array.from({ length: 16384 }, (_, i) => Math.sin(i / 300) + (i % 5) / 10) },
    { tt: randomTrain(modes, capped(96), 23) },
    { tt: toF32(q) },
    { tt: randomTrain(modes, capped(8), 24) },
    { tt: randomTrain(modes, capped(3), 25) },
    { tt: toF32(randomTrain(modes, capped(96), 26)) },
  ];
  let pool: OperandPool;
  const ids = Float64Array.from(cands, (_, j) => 100 + j);
  const norms = new Float64Array(cands.length);
  let qNorm = 0;
  const denseQuery = -1;
  let denseQueryNorm = 0;

  before(async () => {
    pool = engine.createOperandPool();
    await pool.addTrain(1, q);
    qNorm = await pool.norm(1);
    for (let j = 0; j < cands.length; j++) {
      const c = cands[j]!;
      if (c.tt) await pool.addTrain(ids[j]!, c.tt);
      else await pool.addDense(ids[j]!, new Uint8Array(c.dense!.buffer), 'float64', shape, 'row_major');
      norms[j] = await pool.norm(ids[j]!);
    }
    const values = Float64Array.from({ length: 16384 }, (_, i) => Math.cos(i / 77) * (1 + (i % 3)));
    await pool.addDense(denseQuery, new Uint8Array(values.buffer), 'float64', shape, 'row_major');
    denseQueryNorm = await pool.norm(denseQuery);
  });

  for (const [name, queryId, norm] of [
    ['a train', 1, () => qNorm],
    ['an array', denseQuery, () => denseQueryNorm],
  ] as const) {
    for (const metric of METRICS) {
      it(`${metric}, query ${name}: chunks of every size give exactly the scores of one pass`, async () => {
        const admission = new EngineAdmission();
        const whole = await pool.score(queryId, norm(), ids, norms, metric);
        const works = await pool.scoreWork(queryId, ids, metric);
        const sorted = [...works].sort((a, b) => a - b);
        // From one candidate a chunk to all of them in one.
        for (const turnWork of [0, sorted[0]!, sorted[4]! * 2, sorted[8]! * 3, sorted.at(-1)!, Infinity]) {
          const rec = recording(pool);
          const got = await scoreInTurns({ pool: rec.pool, admission, turnWork }, { owner: 't' }, queryId, norm(), ids, norms, metric);
          expect(Array.from(got), `turn work ${turnWork}`).to.deep.equal(Array.from(whole));
          expect(rec.chunks.flat()).to.deep.equal(Array.from(ids));
        }
      });
    }
  }

  it("each chunk is the longest run of candidates within the turn's work, or one candidate above it", async () => {
    for (const metric of METRICS) {
      const works = await pool.scoreWork(1, ids, metric);
      const sorted = [...works].sort((a, b) => a - b);
      const turnWork = sorted[sorted.length >> 1]! * 2.5;
      const rec = recording(pool);
      await scoreInTurns({ pool: rec.pool, admission: new EngineAdmission(), turnWork }, { owner: 't' }, 1, qNorm, ids, norms, metric);
      expect(rec.chunks.length).to.be.greaterThan(2);
      let j = 0;
      for (const chunk of rec.chunks) {
        const sum = chunk.reduce((s, _, i) => s + works[j + i]!, 0);
        if (chunk.length > 1) expect(sum, `${metric} chunk at ${j}`).to.be.at.most(turnWork);
        if (j + chunk.length < works.length) expect(sum + works[j + chunk.length]!, `${metric} chunk at ${j}`).to.be.greaterThan(turnWork);
        j += chunk.length;
      }
    }
  });

  it('estimates from ranks and modes: the contraction trainWork counts, more for heavier trains and for euclidean', async () => {
    const [dot, cosine, euclidean] = await Promise.all((['dot', 'cosine', 'euclidean'] as Metric[]).map((m) => pool.scoreWork(1, ids, m)));
    // Candidate 7 is q itself: scoring it costs q's own norm, as put_cores bounds it.
    expect(dot[7]).to.equal(engine.trainWork(modes, q.ranks, modes).contraction);
    expect(cosine[7]).to.equal(dot[7]);
    for (let j = 0; j < cands.length; j++) {
      if (cands[j]!.tt) expect(euclidean[j]).to.be.greaterThan(dot[j]!);
      expect(dot[j]).to.be.greaterThan(0);
    }
    // Rank 96 against rank 8 costs more than rank 24, which costs more than rank 3.
    expect(dot[11]).to.be.greaterThan(dot[9]!);
    expect(dot[9]).to.be.greaterThan(dot[14]!);
    // An array against a train: O(numel r) multiply-adds.
    expect(dot[10]).to.be.within(16384, 16384 * 64);
    // Modes that differ cost nothing here (score() refuses them).
    const other = -2;
    await pool.addTrain(other, randomTrain([4, 4, 4, 4, 4, 4, 4], [1, 2, 2, 2, 2, 2, 2, 1], 3));
    expect(Array.from(await pool.scoreWork(1, Float64Array.of(other), 'dot'))).to.deep.equal([0]);
    pool.remove(other);
    const err = await pool.scoreWork(1, Float64Array.of(other), 'dot').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).to.be.instanceOf(RangeError);
    expect(err!.message).to.match(/not in the pool/);
  });

  it("a turn holds at most a stored train's bound of work", () => {
    expect(MAX_TURN_WORK).to.equal(MAX_TRAIN_WORK);
  });

  it("another tenant's engine work runs between two chunks, not after the whole query", async () => {
    // One slot, so every turn waits for the one before it.
    const admission = new EngineAdmission({ slots: 1 });
    const events: string[] = [];
    let other: Promise<void> | null = null;
    const rec = recording(pool, (chunk) => {
      events.push(`a ${chunk.join(',')}`);
      // While the first chunk runs, another tenant asks for a turn.
      other ??= admission.run({ owner: 'b' }, async () => {
        events.push('b');
      });
    });
    const turn: Turn = { owner: 'a' };
    const got = await scoreInTurns({ pool: rec.pool, admission, turnWork: 0 }, turn, 1, qNorm, ids, norms, 'cosine');
    await other;
    expect(got).to.have.length(cands.length);
    expect(events[0]).to.equal('a 100');
    expect(events[1]).to.equal('b');
    expect(events).to.have.length(cands.length + 1);
  });

  it('stops between chunks when the client has gone', async () => {
    const admission = new EngineAdmission();
    const abort = new AbortController();
    const rec = recording(pool, () => abort.abort());
    const err = await scoreInTurns(
      { pool: rec.pool, admission, turnWork: 0 },
      { owner: 'a', signal: abort.signal },
      1,
      qNorm,
      ids,
      norms,
      'dot',
    ).then(
      () => null,
      (e: unknown) => e as { status?: number },
    );
    expect(err?.status).to.equal(503);
    expect(rec.chunks).to.have.length(1);
  });
});
