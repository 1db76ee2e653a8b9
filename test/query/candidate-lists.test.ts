// Candidate lists kept between top-K queries, in process (no HTTP): a repeated top-K over an
// unchanged namespace lists no rows, and every put, delete or tenant purge is seen by the next query.
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
import { smooth } from './helpers.js';
import { testEntryService } from '../helpers/entries.js';

describe('query: candidate lists', function () {
  this.timeout(60000);
  let dir: string;
  let db: Database;
  let entries: EntryService;
  let listings: number;

  const put = (key: string, seed: number, opts: { tenantId?: string; namespace?: string; shape?: number[] } = {}) => {
    const shape = opts.shape ?? [64, 64];
    return entries.put({
      tenantId: opts.tenantId ?? 't1',
      namespace: opts.namespace ?? 'default',
      key,
      metadata: { seed, group: seed % 2 },
      payload: { kind: 'array', dtype: 'float64', shape, data: Buffer.from(new Float64Array(smooth(shape, seed)).buffer) },
      target: resolveTarget(undefined, undefined, undefined),
    });
  };
  const keysOf = (r: { results: Array<[string, number]> }) => r.results.map((p) => p[0]).sort();

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-qlists-'));
    db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
    const all = db.all.bind(db);
    listings = 0;
    db.all = ((sql: string, params?: unknown[]) => {
      if (/e\.norm IS NOT NULL/.test(sql)) listings++;
      return all(sql, params as never);
    }) as Database['all'];
    const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
    entries = testEntryService(db, blobs);
  });
  afterEach(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a repeated top-K lists its candidates once, whichever key asks', async () => {
    const q = new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: 1 << 30 });
    for (let j = 0; j < 6; j++) await put(`k${j}`, j);
    const first = await q.topk('t1', 'default', 'k0', 10, 'cosine', {});
    expect(keysOf(first)).to.deep.equal(['k1', 'k2', 'k3', 'k4', 'k5']);
    expect(listings).to.equal(1);
    expect(await q.topk('t1', 'default', 'k0', 10, 'cosine', {})).to.deep.equal(first);
    const other = await q.topk('t1', 'default', 'k3', 10, 'cosine', {});
    expect(keysOf(other)).to.deep.equal(['k0', 'k1', 'k2', 'k4', 'k5']);
    expect(await q.topk('t1', 'default', 'k0', 10, 'cosine', {})).to.deep.equal(first);
    expect(listings).to.equal(1);
    expect(q.candidates.stats()).to.deep.equal({ lists: 1, rows: 6 });
    // The same key asked again gets the same array (what a query derives from it is kept with it).
    const like = { shape: JSON.stringify([64, 64]) };
    const list = await q.candidates.list('t1', 'default', like, 'k2', {});
    expect(list.map((r) => r.key)).to.deep.equal(['k0', 'k1', 'k3', 'k4', 'k5']);
    expect(await q.candidates.list('t1', 'default', like, 'k2', {})).to.equal(list);
  });

  it('a put, a delete and a rewrite in the namespace are seen by the next top-K', async () => {
    const q = new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: 1 << 30 });
    for (let j = 0; j < 3; j++) await put(`k${j}`, j);
    expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k1', 'k2']);
    await put('k3', 3);
    expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k1', 'k2', 'k3']);
    await entries.delete('t1', 'default', 'k1');
    expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k2', 'k3']);
    // k2 rewritten with k0's values: now the best match, scored in its new version
    await put('k2', 0);
    const after = await q.topk('t1', 'default', 'k0', 1, 'cosine', {});
    expect(after.results[0]![0]).to.equal('k2');
    expect(after.results[0]![1]).to.be.closeTo(1, 1e-9);
    expect(listings).to.equal(4);
  });

  it('a write elsewhere keeps the list; another shape, namespace or tenant has its own', async () => {
    const q = new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: 1 << 30 });
    for (let j = 0; j < 3; j++) await put(`k${j}`, j);
    await put('k0', 0, { namespace: 'other' });
    await put('k0', 0, { tenantId: 't2' });
    expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k1', 'k2']);
    await put('k9', 9, { namespace: 'other' });
    await put('k9', 9, { tenantId: 't2' });
    await put('wide', 1, { shape: [32, 128] });
    expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k1', 'k2']);
    expect(listings).to.equal(2); // the put of another shape in the namespace dropped the list
    expect(keysOf(await q.topk('t1', 'other', 'k0', 10, 'cosine', {}))).to.deep.equal(['k9']);
    expect(keysOf(await q.topk('t2', 'default', 'k0', 10, 'cosine', {}))).to.deep.equal(['k9']);
    expect(keysOf(await q.topk('t1', 'default', 'wide', 10, 'cosine', {}))).to.deep.equal([]);
    expect(q.candidates.stats().lists).to.equal(4);
  });

  it('filtered queries list from SQLite every time; a tenant purge drops every list of the tenant', async () => {
    const q = new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: 1 << 30 });
    for (let j = 0; j < 4; j++) await put(`k${j}`, j);
    for (let r = 0; r < 2; r++) {
      expect(keysOf(await q.topk('t1', 'default', 'k0', 10, 'cosine', { group: 0 }))).to.deep.equal(['k2']);
    }
    expect(listings).to.equal(2);
    await q.topk('t1', 'default', 'k0', 10, 'cosine', {});
    expect(q.candidates.stats().lists).to.equal(1);
    await entries.purgeTenant('t1');
    expect(q.candidates.stats().lists).to.equal(0);
  });

  it('a budget of 0 rows keeps nothing', async () => {
    const q = new QueryService({ entries, search: new SqliteEntryStore(db), engine, coreCacheBytes: 1 << 30, candidateListRows: 0 });
    for (let j = 0; j < 3; j++) await put(`k${j}`, j);
    for (let r = 0; r < 3; r++) await q.topk('t1', 'default', 'k0', 10, 'cosine', {});
    expect(listings).to.equal(3);
  });
});
