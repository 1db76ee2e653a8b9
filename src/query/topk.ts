// The k best scores with a bounded heap: O(n log k) time, O(k) memory, whatever n is.
// Order (CONTRACT.md section 6): cosine and dot descending, euclidean ascending; ties by key
// ascending. Candidates arrive in ascending key order, so a tie is broken by the smaller index.

/** Indices of the k best of `scores`, best first; `ascending`: smaller is better (euclidean). */
export function topKIndices(scores: ArrayLike<number>, k: number, ascending: boolean): number[] {
  const sign = ascending ? -1 : 1;
  // a before b in the result order
  const better = (a: number, b: number): boolean => {
    const sa = sign * scores[a]!;
    const sb = sign * scores[b]!;
    return sa > sb || (sa === sb && a < b);
  };
  // Min-heap by `better`: the root is the worst of those kept.
  const heap: number[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!better(heap[p]!, heap[i]!)) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && better(heap[w]!, heap[l]!)) w = l;
      if (r < heap.length && better(heap[w]!, heap[r]!)) w = r;
      if (w === i) return;
      [heap[w], heap[i]] = [heap[i]!, heap[w]!];
      i = w;
    }
  };
  for (let j = 0; j < scores.length; j++) {
    if (heap.length < k) {
      heap.push(j);
      up(heap.length - 1);
    } else if (k > 0 && better(j, heap[0]!)) {
      heap[0] = j;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : 1));
}
