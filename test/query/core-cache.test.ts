// The decoded-core cache, in process (no HTTP): repeated queries read no blob files, writes and
// deletes drop what they made stale, and the byte budget holds between queries.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/store/sqlite/db.js';
import { SqliteEntryStore } from '../../src/store/sqlite/entries.js';
import { FileBlobStore } from '../../src/store/blobs.js';
import { EntryService } from '../../src/entries/service.js';
import { ENTRY_MIGRATIONS } from '../../src/store/sqlite/migrations/entries.js';
import { resolveTarget } from '../../src/entries/oracle.js';
import { engine } from '../../src/engine/index.js';
import { QueryService } from '../../src/query/service.js';
import { testEntryService } from '../helpers/entries.js';

const SHAPE = [64, 64];

/**
 * Separable fields, so that put lays every one out in row_major: a query whose candidates sit in
 * another layout reads its own cores again to move into theirs (query-layouts.ts).
 */
function separable(seed: number): number[] {
  return Array.from({ length: 64 * 64 }, (_, t) => {
    const [x, y] = [Math.floor(t / 64) / 64, (t % 64) / 64];
    return Math.sin(3 * x + seed) * Math.cos(2 * y) + Math.cos(2 * x - seed) * Math.sin(3 * y + seed);
  });
}

/** A front along the diagonal, offset by `shift`: put lays it out interleaved. */
function front(shift: number): number[] {
  return Array.from({ length: 64 * 64 }, (_, t) => Math.tanh((Math.floor(t / 64) - (t % 64) + shift) / 1.5));
}

describe('query: core cache', function () {
  this.timeout(60000);
  let dir: string;
  let dbs: Database[];
  let entries: EntryService;
  let reads: number;

  const open = async (budget: number, groupBytes?: number) => {
    const db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
    dbs.push(db);
    const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
    const read = blobs.read.bind(blobs);
    blobs.read = (...args: Parameters<FileBlobStore['read']>) => {
      reads++;
      return read(...args);
    };
    entries = testEntryService(db, blobs);
    return new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: budget, groupBytes });
  };
  const put = (key: string, seed: number, tenantId = 't1', values = separable(seed)) =>
    entries.put({
      tenantId,
      namespace: 'default',
      key,
      metadata: { seed },
      payload: { kind: 'array', dtype: 'float64', shape: SHAPE, data: Buffer.from(new Float64Array(values).buffer) },
      target: resolveTarget(undefined, undefined, undefined),
    });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-qcache-'));
    reads = 0;
    dbs = [];
  });
  afterEach(async () => {
    for (const db of dbs) await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a repeated top-K reads no blob files and gives the same answer', async () => {
    const q = await open(1 << 30);
    for (let j = 0; j < 8; j++) await put(`k${j}`, j);
    const first = await q.topk('t1', 'default', 'k0', 3, 'cosine', {});
    expect(reads).to.equal(8);
    expect(q.cache.stats()).to.include({ entries: 8, misses: 8 });
    const again = await q.topk('t1', 'default', 'k0', 3, 'cosine', {});
    expect(reads).to.equal(8);
    expect(again).to.deep.equal(first);
    expect(q.cache.stats().hits).to.equal(8);
    expect(q.cache.stats().bytes).to.be.above(0);
  });

  it('writes and deletes drop the stale operands; the next query uses the latest version', async () => {
    const q = await open(1 << 30);
    const writer = entries;
    for (let j = 0; j < 4; j++) await put(`k${j}`, j);
    await q.topk('t1', 'default', 'k0', 10, 'dot', {});
    const held = q.cache.stats();
    expect(held.entries).to.equal(4);
    await put('k1', 7); // new version of k1
    expect(q.cache.stats().entries).to.equal(3);
    await entries.delete('t1', 'default', 'k2');
    expect(q.cache.stats().entries).to.equal(2);
    const after = await q.topk('t1', 'default', 'k0', 10, 'dot', {});
    expect(after.results.map((r) => r[0]).sort()).to.deep.equal(['k1', 'k3']);
    const k1 = after.results.find((r) => r[0] === 'k1')![1];
    const fresh = await open(1 << 30); // a cold cache over the same data
    const cold = await fresh.similarity('t1', 'default', 'k0', 'k1', 'dot');
    expect(k1).to.equal(cold);
    await writer.purgeTenant('t1');
    expect(q.cache.stats().entries).to.equal(0);
  });

  it('keeps within its byte budget between queries, and a query larger than the budget still runs', async () => {
    const probe = await open(1 << 30);
    for (let j = 0; j < 10; j++) await put(`k${j}`, j);
    await probe.similarity('t1', 'default', 'k0', 'k1', 'cosine');
    const perEntry = probe.cache.stats().bytes / 2;
    const budget = Math.floor(perEntry * 3.5);
    const q = await open(budget);
    const all = await q.topk('t1', 'default', 'k0', 10, 'cosine', {});
    expect(all.n_candidates).to.equal(9);
    expect(q.cache.stats().bytes).to.be.at.most(budget);
    expect(q.cache.stats().entries).to.be.within(1, 6);
    const none = await open(0);
    expect(await none.topk('t1', 'default', 'k0', 10, 'cosine', {})).to.deep.equal(all);
    expect(none.cache.stats()).to.include({ entries: 0, bytes: 0 });
  });
  it('a top-K larger than the budget holds its candidates a group at a time, with the answer of one pass', async () => {
    const probe = await open(1 << 30);
    for (let j = 0; j < 10; j++) await put(`k${j}`, j);
    const whole = await probe.topk('t1', 'default', 'k0', 10, 'euclidean', {});
    const perEntry = probe.cache.stats().bytes / 10;
    const q = await open(Math.floor(perEntry * 1.5), Math.floor(perEntry * 3.5));
    const groups: number[] = [];
    let peak = 0;
    const acquire = q.cache.acquireIds.bind(q.cache);
    q.cache.acquireIds = async (idList, refsOf, signal) => {
      const release = await acquire(idList, refsOf, signal);
      groups.push(idList.length);
      peak = Math.max(peak, q.cache.stats().bytes);
      return release;
    };
    expect(await q.topk('t1', 'default', 'k0', 10, 'euclidean', {})).to.deep.equal(whole);
    expect(groups.reduce((a, b) => a + b, 0)).to.equal(9);
    expect(groups.length).to.be.at.least(3);
    // The query's operand, the budget's worth kept from the group before, and one group (about 6
    // entries of the average size), never all 10 at once.
    expect(peak).to.be.below(perEntry * 7);
  });

  it('a warm top-K reads no storage refs; a cold one asks only for the missing operands', async () => {
    const q = await open(1 << 30);
    const ids: number[] = [];
    for (let j = 0; j < 6; j++) ids.push((await put(`k${j}`, j)).id);
    await q.topk('t1', 'default', 'k0', 3, 'cosine', {}); // all six held now
    const asked: number[][] = [];
    const release = await q.cache.acquireIds(ids, async (missing) => {
      asked.push(missing);
      return [];
    });
    expect(asked).to.deep.equal([]);
    release();
    await put('k6', 6); // a new entry: the only miss of the next query
    const newId = (await entries.require('t1', 'default', 'k6')).id;
    const seen: number[][] = [];
    const spy = q.cache.acquireIds.bind(q.cache);
    q.cache.acquireIds = (idList, refsOf) =>
      spy(idList, async (missing) => {
        seen.push(missing);
        return refsOf(missing);
      });
    await q.topk('t1', 'default', 'k0', 3, 'cosine', {});
    expect(seen).to.deep.equal([[newId]]);
  });

  it("a query moved into its candidates' layout is moved once, and a new version of its key drops it", async () => {
    const q = await open(1 << 30);
    expect((await put('q', 0)).layout).to.equal('row_major');
    for (let j = 0; j < 3; j++) expect((await put(`f${j}`, j, 't1', front(j - 1))).layout).to.equal('interleaved');
    const first = await q.topk('t1', 'default', 'q', 3, 'cosine', {});
    // The three candidates and the query held in their layout (its own layout holds no candidate).
    expect(q.cache.stats()).to.include({ entries: 4, misses: 4 });
    const read = reads;
    expect(await q.topk('t1', 'default', 'q', 3, 'cosine', {})).to.deep.equal(first);
    const similarity = await q.similarity('t1', 'default', 'q', 'f0', 'cosine');
    expect(similarity).to.equal(first.results.find(([key]) => key === 'f0')![1]);
    expect(reads, 'the query is not read or moved again').to.equal(read);
    expect(q.cache.stats()).to.include({ entries: 4, misses: 4 });

    await put('q', 5); // a new version of the query's key
    expect(q.cache.stats().entries).to.equal(3);
    const after = await q.topk('t1', 'default', 'q', 3, 'cosine', {});
    expect(reads).to.equal(read + 1);
    const fresh = await open(1 << 30); // a cold cache over the same data
    expect(after).to.deep.equal(await fresh.topk('t1', 'default', 'q', 3, 'cosine', {}));
    expect(after).not.to.deep.equal(first);
  });

  it('acquireIds rejects an id without a stored entry and leaves nothing pinned', async () => {
    const q = await open(1 << 30);
    const id = (await put('k0', 0)).id;
    await q.topk('t1', 'default', 'k0', 1, 'cosine', {});
    let err: unknown;
    await q.cache
      .acquireIds([id, 999999], async () => [])
      .catch((e: unknown) => {
        err = e;
      });
    expect(String(err)).to.match(/no stored entry/);
    q.cache.invalidate({ tenantId: 't1', namespace: 'default', key: 'k0' });
    expect(q.cache.stats().entries).to.equal(0); // unpinned, so dropped at once
  });
});
