// The bounded heap behind top-K: the same answer as a full sort, ties by index (= key order).
import { expect } from 'chai';
import { topKIndices } from '../../src/query/topk.js';
import { rng } from '../storage/helpers.js';

function bySort(scores: number[], k: number, ascending: boolean): number[] {
  return scores
    .map((s, i) => i)
    .sort((a, b) => (scores[a] === scores[b] ? a - b : ascending ? scores[a]! - scores[b]! : scores[b]! - scores[a]!))
    .slice(0, k);
}

describe('query: top-K heap', () => {
  it('equals a full sort for every k, both directions, with many ties', () => {
    const r = rng(42);
    for (const n of [0, 1, 2, 7, 100, 1000]) {
      const scores = Array.from({ length: n }, () => Math.round(r() * 20) / 4 - 2);
      for (const k of [1, 2, 3, 10, 999, 1000]) {
        for (const asc of [false, true]) {
          expect(topKIndices(Float64Array.from(scores), k, asc), `n ${n} k ${k} asc ${asc}`).to.deep.equal(bySort(scores, k, asc));
        }
      }
    }
  });
});
