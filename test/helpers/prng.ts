// A seeded pseudo-random source for fuzz tests (mulberry32): the same seed gives the same cases, so
// a failure names the seed and case that reproduce it.

export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `n` characters drawn from `alphabet`. */
  text(alphabet: string, n: number): string;
}

/** Uniform [0, 1) numbers from `seed` (mulberry32): the same sequence in every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function prng(seed: number): Prng {
  const next = rng(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => items[int(0, items.length - 1)]!,
    text: (alphabet, n) => {
      let out = '';
      for (let i = 0; i < n; i++) out += alphabet[int(0, alphabet.length - 1)];
      return out;
    },
  };
}
