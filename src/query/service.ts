// The query feature (SPEC.md "Query endpoints", CONTRACT.md section 6): pairwise similarity, top-K by
// stored key and by an external vector, and metadata search. Scores come from the engine's
// contractions on the stored representation (cores against cores; an uncompressed entry through its
// stored values), with each entry's norm kept at write time, so cosine costs one inner product per
// candidate; a top-K scores its candidates in chunks of bounded engine work, each in the tenant's
// turn of the engine admission (score-turns.ts), and keeps the k best with a bounded heap. Entries of
// one shape are comparable whatever their layouts: the query is held once in each layout its
// candidates are held in (query-layouts.ts; a stored query's moves kept in the core cache), and each
// candidate is scored against that one.
import { badRequest, ProblemError } from '../http/errors.js';
import { isInvalidInput } from '../engine/index.js';
import { ITEM_SIZE, type Engine, type LayoutName, type Metric, type OperandPool } from '../engine/types.js';
import { compressWork } from '../engine/limits.js';
import { shapeOf } from '../entries/entry.js';
import type { EntryRow } from '../store/entries.js';
import { layoutForShape, type EntryService } from '../entries/service.js';
import { holdInLayout, layoutsOf, type LayoutChange } from './query-layouts.js';
import type { Payload } from '../codec/payload.js';
import { EngineAdmission, type Turn } from '../admission/engine-admission.js';
import { CandidateLists } from './candidate-lists.js';
import type { CandidateRow, Comparable, EntrySearch } from '../store/entries.js';
import { CoreCache, type CacheRow } from './core-cache.js';
import type { Filters } from '../store/filters.js';
import { chunkEnds, scoreInTurns } from './score-turns.js';
import { topKIndices } from './topk.js';

export interface TopKResult {
  n_candidates: number;
  /** [key, score] pairs, most similar first. */
  results: Array<[string, number]>;
}

export interface SearchResult {
  key: string;
  metadata: Record<string, unknown>;
  version: number;
}

export interface QueryServiceOptions {
  entries: EntryService;
  /** The candidates, operands' storage and metadata search of the entries (the entries' store). */
  search: EntrySearch;
  engine: Engine;
  /** Byte budget of the decoded-core cache (SVC_GATE_CORE_CACHE_BYTES). */
  coreCacheBytes: number;
  /** Rows of unfiltered candidate lists kept between top-K queries (default 200,000; 0: none). */
  candidateListRows?: number;
  /**
   * Engine admission shared with the entries: every query's engine work (loading operands that need
   * computing, scoring, a top-K by vector's decomposition) runs in its tenant's turns.
   */
  admission?: EngineAdmission;
  /** Largest estimated work of one scoring turn (tests; default MAX_TURN_WORK). */
  turnWork?: number;
  /** Bytes of candidates' operands a top-K holds at once (tests; default the cache's budget, at least MIN_GROUP_BYTES). */
  groupBytes?: number;
}

/** A top-K holds at least this many bytes of candidates' operands at once, whatever the cache's budget. */
const MIN_GROUP_BYTES = 64 << 20;

/** The query side of a scoring call: an operand held in the pool, and its norm. */
interface QueryOperand {
  id: number;
  norm: number;
}

/** The query held in each layout its candidates are held in. */
type QueryOperands = Map<LayoutName, QueryOperand>;

function numel(shape: string): number {
  return (JSON.parse(shape) as number[]).reduce((a, b) => a * b, 1);
}

function finiteNorm(row: EntryRow): number {
  if (row.norm === null) {
    throw badRequest(`entry ${JSON.stringify(row.key)} holds values that are not finite (NaN or Inf), so it has no similarity scores`);
  }
  return row.norm;
}

export class QueryService {
  readonly cache: CoreCache;
  readonly candidates: CandidateLists;
  private readonly pool: OperandPool;
  private readonly entries: EntryService;
  private readonly store: EntrySearch;
  private readonly engine: Engine;
  private readonly admission: EngineAdmission;
  private readonly turnWork: number | undefined;
  /** Bytes of candidates' operands a top-K holds at once (CandidateRow.bytes). */
  private readonly groupBytes: number;
  /** Transient operands (decomposed query vectors) use negative ids; entries have positive ones. */
  private nextTransientId = -1;

  constructor(opts: QueryServiceOptions) {
    this.entries = opts.entries;
    this.engine = opts.engine;
    this.admission = opts.admission ?? new EngineAdmission();
    this.turnWork = opts.turnWork;
    this.groupBytes = opts.groupBytes ?? Math.max(opts.coreCacheBytes, MIN_GROUP_BYTES);
    this.pool = opts.engine.createOperandPool();
    this.cache = new CoreCache(
      this.pool,
      opts.entries,
      opts.coreCacheBytes,
      (row) => comparisonModes(this.engine, row),
      this.admission,
      (tt, modes) => this.engine.trainWork(tt.modes, tt.ranks, modes).resplit,
    );
    this.store = opts.search;
    this.candidates = new CandidateLists(opts.search, opts.candidateListRows ?? 200_000);
    opts.entries.onChange((change) => {
      this.cache.invalidate(change);
      this.candidates.invalidate(change);
    });
  }

  /**
   * The metric between two live entries of a namespace, scored in `turn`; 404 when either is
   * missing, 400 shape_mismatch.
   */
  async similarity(
    tenantId: string,
    namespace: string,
    keyA: string,
    keyB: string,
    metric: Metric,
    turn: Turn = { owner: tenantId },
  ): Promise<number> {
    const a = await this.entries.require(tenantId, namespace, keyA);
    const b = await this.entries.require(tenantId, namespace, keyB);
    if (a.shape !== b.shape) {
      throw new ProblemError(
        400,
        'shape_mismatch',
        `entries ${JSON.stringify(keyA)} (shape ${a.shape}) and ${JSON.stringify(keyB)} (shape ${b.shape}) ` +
          `are not comparable: their shapes must be equal`,
      );
    }
    const norms = new Map([
      [a, finiteNorm(a)],
      [b, finiteNorm(b)],
    ]);
    if (numel(a.shape) === 0) return 0;
    // In different layouts one side moves into the other's: an uncompressed one (a gather) if any.
    const same = a.layout === b.layout;
    const [moved, kept] = same || b.blob_kind === 'cores' ? [a, b] : [b, a];
    const release = await this.cache.acquire(
      same ? [cacheRow(tenantId, namespace, a), cacheRow(tenantId, namespace, b)] : [cacheRow(tenantId, namespace, kept)],
      turn.signal,
    );
    let movedId = moved.id;
    let releaseMoved = () => {};
    try {
      if (!same) ({ id: movedId, release: releaseMoved } = await this.inLayout(tenantId, namespace, moved, kept.layout, turn));
      const ids = Float64Array.of(kept.id);
      const [work] = await this.pool.scoreWork(movedId, ids, metric);
      const s = await this.admission.run(
        turn,
        () => this.pool.score(movedId, norms.get(moved)!, ids, Float64Array.of(norms.get(kept)!), metric),
        work,
      );
      return s[0]!;
    } finally {
      releaseMoved();
      release();
    }
  }

  /**
   * The k entries most similar to a stored one (itself left out), among those matching `filters`,
   * scored in `turn`.
   */
  async topk(
    tenantId: string,
    namespace: string,
    queryKey: string,
    k: number,
    metric: Metric,
    filters: Filters,
    turn: Turn = { owner: tenantId },
  ): Promise<TopKResult> {
    const q = await this.entries.require(tenantId, namespace, queryKey);
    const norm = finiteNorm(q);
    const candidates = await this.candidates.list(tenantId, namespace, q, queryKey, filters);
    if (candidates.length === 0 || numel(q.shape) === 0) return this.rankTrivially(candidates, k);
    const queries: QueryOperands = new Map();
    const releases: Array<() => void> = [];
    try {
      for (const layout of layoutsOf(candidates)) {
        if (layout === q.layout) {
          releases.push(await this.cache.acquire([cacheRow(tenantId, namespace, q)], turn.signal));
          queries.set(layout, { id: q.id, norm });
        } else {
          const held = await this.inLayout(tenantId, namespace, q, layout, turn);
          releases.push(held.release);
          queries.set(layout, { id: held.id, norm });
        }
      }
      return await this.rank(tenantId, namespace, queries, candidates, k, metric, turn);
    } finally {
      for (const release of releases) release();
    }
  }

  /**
   * The k stored entries most similar to an array given with the request: decomposed at `tolerance`
   * in each layout its candidates are held in (row_major when there are none), then compared core
   * against core (kept as values when its cores would not be smaller than the array, as put would
   * store it). The decompositions and the scoring take `turn` of the engine admission, as a put's
   * compression does.
   */
  async topkVector(
    tenantId: string,
    namespace: string,
    payload: Payload,
    tolerance: number,
    k: number,
    metric: Metric,
    filters: Filters,
    turn: Turn = { owner: tenantId },
  ): Promise<TopKResult> {
    const like: Comparable = { shape: JSON.stringify(payload.shape) };
    const size = payload.shape.reduce((a, b) => a * b, 1);
    const candidates = await this.candidates.list(tenantId, namespace, like, null, filters);
    if (size === 0) return this.rankTrivially(candidates, k);
    const layouts = candidates.length > 0 ? layoutsOf(candidates) : [layoutForShape(this.engine, payload.shape).layout];
    const queries: QueryOperands = new Map();
    try {
      for (const layout of layouts) {
        const id = this.nextTransientId--;
        queries.set(layout, { id, norm: 0 });
        queries.get(layout)!.norm = await this.addVector(id, payload, layout, tolerance, turn);
      }
      if (candidates.length === 0) return this.rankTrivially(candidates, k);
      return await this.rank(tenantId, namespace, queries, candidates, k, metric, turn);
    } finally {
      for (const { id } of queries.values()) this.pool.remove(id);
    }
  }

  /** One page of the live entries whose metadata matches, latest versions, in ascending key order; and how many match. */
  async search(
    tenantId: string,
    namespace: string,
    filters: Filters,
    limit: number,
    offset: number,
  ): Promise<{ results: SearchResult[]; total: number }> {
    const { rows, total } = await this.store.searchMetadata(tenantId, namespace, filters, limit, offset);
    return {
      results: rows.map((r) => ({ key: r.key, metadata: JSON.parse(r.metadata) as Record<string, unknown>, version: r.version })),
      total,
    };
  }

  /**
   * Scores every candidate against the query in its layout and keeps the k best: the operands are
   * held a group at a time (a group's about as large as the cache's budget, so a namespace larger
   * than it never sits in memory whole), each group scored in chunks, each chunk in `turn`.
   */
  private async rank(
    tenantId: string,
    namespace: string,
    queries: QueryOperands,
    candidates: readonly CandidateRow[],
    k: number,
    metric: Metric,
    turn: Turn,
  ): Promise<TopKResult> {
    const { ids, bytes, byLayout } = arraysOf(candidates);
    const scores = new Float64Array(candidates.length);
    const turns = { pool: this.pool, admission: this.admission, turnWork: this.turnWork };
    const refsOf = async (missing: number[]) =>
      (await this.store.storageRefs(tenantId, missing)).map((r) => cacheRow(tenantId, namespace, r));
    let start = 0;
    for (const end of chunkEnds(bytes, this.groupBytes)) {
      const release = await this.cache.acquireIds(ids.subarray(start, end), refsOf, turn.signal);
      try {
        for (const [layout, q] of queries) {
          const g = byLayout.get(layout)!;
          const [lo, hi] = [lowerBound(g.at, start), lowerBound(g.at, end)];
          if (lo === hi) continue;
          // A list scored in one group keeps the work estimates of its last query (a repeated top-K by key).
          const whole = lo === 0 && hi === g.at.length;
          let works = whole && g.works?.queryId === q.id && g.works.metric === metric ? g.works.works : undefined;
          if (whole && !works) g.works = { queryId: q.id, metric, works: (works = await this.pool.scoreWork(q.id, g.ids, metric)) };
          const part = await scoreInTurns(turns, turn, q.id, q.norm, g.ids.subarray(lo, hi), g.norms.subarray(lo, hi), metric, works);
          for (let i = lo; i < hi; i++) scores[g.at[i]!] = part[i - lo]!;
        }
      } finally {
        release();
      }
      start = end;
    }
    const best = topKIndices(scores, k, metric === 'euclidean');
    return { n_candidates: candidates.length, results: best.map((j) => [candidates[j]!.key, scores[j]!]) };
  }

  /** Arrays without elements: every score is 0 (cosine with a zero norm is 0), so key order decides. */
  private rankTrivially(candidates: readonly CandidateRow[], k: number): TopKResult {
    return { n_candidates: candidates.length, results: candidates.slice(0, k).map((c) => [c.key, 0]) };
  }

  /**
   * Stored entry `row` held in `layout` (not its own) through the core cache, so that it is moved
   * (query-layouts.ts) once while the cache keeps it, the moving in `turn`; release it when done.
   */
  private inLayout(
    tenantId: string,
    namespace: string,
    row: EntryRow,
    layout: LayoutName,
    turn: Turn,
  ): Promise<{ id: number; release: () => void }> {
    const ref = cacheRow(tenantId, namespace, row);
    const change: LayoutChange = { engine: this.engine, pool: this.pool, entries: this.entries, admission: this.admission };
    return this.cache.acquireMoved(ref, layout, (id) => holdInLayout(change, id, ref, row.tolerance, layout, turn));
  }

  /** Decomposes the array in `layout` and holds it under `id` (its cores, or its values); resolves to its norm. */
  private async addVector(id: number, payload: Payload, layout: LayoutName, tolerance: number, turn: Turn): Promise<number> {
    try {
      const values = payload.data.length / ITEM_SIZE[payload.dtype];
      const r = await this.admission.run(
        turn,
        () => this.engine.compress(payload.data, payload.dtype, payload.shape, { tolerance, layout }),
        compressWork(values, 1),
      );
      // Holding it (a dense array is gathered into mode order) and its norm: a second, shorter turn.
      const { modes, ranks } = r.tt;
      return await this.admission.run(
        turn,
        async () => {
          if (r.compressible) await this.pool.addTrain(id, r.tt);
          else await this.pool.addDense(id, payload.data, payload.dtype, payload.shape, layout);
          return this.pool.norm(id);
        },
        r.compressible ? this.engine.trainWork(modes, ranks, modes).contraction : values,
      );
    } catch (err) {
      if (isInvalidInput(err)) throw badRequest(`data_b64 cannot be compared: ${err.message}`);
      throw err;
    }
  }
}

/** A candidate list as the scoring calls take it: its ids and operand bytes, and its indices by layout. */
interface CandidateArrays {
  ids: Float64Array;
  bytes: Float64Array;
  /** For each layout present: the indices of its candidates (ascending), their ids and their norms. */
  byLayout: Map<LayoutName, LayoutGroup>;
}

interface LayoutGroup {
  at: Int32Array;
  ids: Float64Array;
  norms: Float64Array;
  /** OperandPool.scoreWork of the last query scored against the whole group. */
  works?: { queryId: number; metric: Metric; works: Float64Array };
}

/**
 * Made once per candidate list: a cached list (candidate-lists.ts) is the same array while its
 * namespace does not change, so a repeated top-K does not walk 10,000 rows again to group them.
 */
const arraysByList = new WeakMap<readonly CandidateRow[], CandidateArrays>();

function arraysOf(candidates: readonly CandidateRow[]): CandidateArrays {
  let arrays = arraysByList.get(candidates);
  if (arrays) return arrays;
  const n = candidates.length;
  const ids = Float64Array.from(candidates, (c) => c.id);
  const counts = new Map<LayoutName, number>();
  for (const c of candidates) counts.set(c.layout, (counts.get(c.layout) ?? 0) + 1);
  const byLayout: CandidateArrays['byLayout'] = new Map();
  for (const [layout, count] of counts) {
    byLayout.set(layout, { at: new Int32Array(count), ids: new Float64Array(count), norms: new Float64Array(count) });
  }
  const filled = new Map<LayoutName, number>();
  for (let j = 0; j < n; j++) {
    const c = candidates[j]!;
    const g = byLayout.get(c.layout)!;
    const i = filled.get(c.layout) ?? 0;
    filled.set(c.layout, i + 1);
    g.at[i] = j;
    g.ids[i] = c.id;
    g.norms[i] = c.norm;
  }
  arrays = { ids, bytes: Float64Array.from(candidates, (c) => c.bytes), byLayout };
  arraysByList.set(candidates, arrays);
  return arrays;
}

/** The first index of ascending `at` whose value is >= `j` (at.length when none is). */
function lowerBound(at: Int32Array, j: number): number {
  let [lo, hi] = [0, at.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at[mid]! < j) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function cacheRow(tenantId: string, namespace: string, row: Omit<CacheRow, 'tenantId' | 'namespace'>): CacheRow {
  return {
    tenantId,
    namespace,
    key: row.key,
    id: row.id,
    blob_id: row.blob_id,
    blob_kind: row.blob_kind,
    checksum: row.checksum,
    original_bytes: row.original_bytes,
    shape: row.shape,
    layout: row.layout,
    dtype: row.dtype,
    modes: row.modes,
  };
}

/**
 * The mode sizes a stored train is compared in when they are not its own: the engine's split of its
 * shape, so that a row_major train put with another split (put_cores) contracts with the entries the
 * engine made, with uncompressed arrays (held in that split) and with decomposed query vectors.
 */
function comparisonModes(engine: Engine, row: Pick<CacheRow, 'shape' | 'layout' | 'modes'>): number[] | undefined {
  const want = engine.layoutFor(shapeOf(row), row.layout).modes;
  return JSON.stringify(want) === row.modes ? undefined : want;
}
