// The entries service on a temporary database, without HTTP: versions, tombstones, compaction with a
// clock the test controls, tenant purge, orphan sweep at start.
import { expect } from 'chai';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/store/sqlite/db.js';
import { globPrefix, SqliteEntryStore } from '../../src/store/sqlite/entries.js';
import { storedBytesOf } from '../../src/entries/storage-quota.js';
import { FileBlobStore } from '../../src/store/blobs.js';
import { EntryService } from '../../src/entries/service.js';
import { ENTRY_MIGRATIONS } from '../../src/store/sqlite/migrations/entries.js';
import { resolveTarget } from '../../src/entries/oracle.js';
import { ProblemError } from '../../src/http/errors.js';
import { testEntryService } from '../helpers/entries.js';

const DAY = 86400;

async function countBlobs(dir: string): Promise<number> {
  let n = 0;
  for (const sub of await readdir(dir)) n += (await readdir(path.join(dir, sub))).filter((f) => f.endsWith('.blob')).length;
  return n;
}

describe('entries service (no HTTP)', () => {
  let dir: string;
  let db: Database;
  let blobs: FileBlobStore;
  let clock: number;
  let svc: EntryService;

  const open = async () => {
    db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
    blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
    svc = testEntryService(db, blobs, { now: () => clock });
  };
  const put = (key: string, text: string, tenantId = 't1', namespace = 'default') =>
    svc.put({
      tenantId,
      namespace,
      key,
      metadata: { text },
      payload: { kind: 'blob', dtype: 'uint8', shape: [text.length], data: Buffer.from(text) },
      target: resolveTarget(undefined, undefined, undefined),
    });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-svc-'));
    clock = 1_700_000_000;
    await open();
  });
  afterEach(async () => {
    svc.stop();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the bytes the store sums per tenant are those storedBytesOf counts, version by version, hidden ones included', async () => {
    // The quota ledger counts writes with storedBytesOf and loads its totals at start from the store's
    // SQL sum: the two must agree on every kind of row, or a restart moves a tenant's stored_bytes.
    const n = 4096;
    const smooth = Buffer.alloc(n * 8);
    for (let i = 0; i < n; i++) smooth.writeDoubleLE(Math.sin(i / 200), i * 8);
    const array = { kind: 'array' as const, dtype: 'float64' as const, shape: [n], data: smooth };
    await svc.put({
      tenantId: 't1',
      namespace: 'default',
      key: 'field',
      metadata: {},
      payload: array,
      target: resolveTarget(undefined, undefined, undefined),
    });
    await put('note', 'a few bytes, kept as they are');
    await put('gone', 'hidden but not purged', 't2');
    await svc.delete('t2', 'default', 'gone');
    const rows = await db.all<{ tenant_id: string; blob_kind: 'cores' | 'raw'; stored_core_bytes: number; original_bytes: number }>(
      'SELECT tenant_id, blob_kind, stored_core_bytes, original_bytes FROM entries',
    );
    expect(rows.map((r) => r.blob_kind).sort()).to.deep.equal(['cores', 'raw', 'raw']);
    const cores = rows.find((r) => r.blob_kind === 'cores')!;
    expect(cores.stored_core_bytes).to.be.below(cores.original_bytes);
    const counted = new Map<string, number>();
    for (const r of rows) counted.set(r.tenant_id, (counted.get(r.tenant_id) ?? 0) + storedBytesOf(r));
    const summed = await new SqliteEntryStore(db).storedBytesByTenant();
    expect(new Map(summed.map((t) => [t.tenantId, t.bytes]))).to.deep.equal(counted);
  });

  it('numbers versions per (tenant, namespace, key) and never reuses one across delete and purge', async () => {
    expect((await put('k', 'a')).version).to.equal(1);
    expect((await put('k', 'b')).version).to.equal(2);
    expect((await put('k', 'x', 't2')).version).to.equal(1);
    expect((await put('k', 'y', 't1', 'other')).version).to.equal(1);
    const del = await svc.delete('t1', 'default', 'k');
    expect(del.versions).to.equal(2);
    expect(del.purgeAfter).to.equal(clock + 30 * DAY);
    expect(await svc.find('t1', 'default', 'k')).to.equal(undefined);
    expect(await svc.find('t1', 'default', 'k', 1)).to.equal(undefined);
    expect((await svc.find('t2', 'default', 'k'))!.version).to.equal(1);
    clock += 31 * DAY;
    expect(await svc.compact()).to.equal(2);
    expect((await put('k', 'c')).version).to.equal(3);
    expect(await svc.find('t1', 'default', 'k', 2)).to.equal(undefined);
    expect(Buffer.from(await svc.readDense((await svc.find('t1', 'default', 'k'))!)).toString()).to.equal('c');
  });

  it('purges tombstones only after the retention period, rows and blobs together', async () => {
    await put('gone', 'data-1');
    await put('kept', 'data-2');
    await svc.delete('t1', 'default', 'gone');
    expect(await countBlobs(blobs.dir)).to.equal(2);
    expect(await svc.compact(clock + 29 * DAY)).to.equal(0);
    expect(await countBlobs(blobs.dir)).to.equal(1 + 1);
    expect(await svc.compact(clock + 30 * DAY + 1)).to.equal(1);
    expect(await countBlobs(blobs.dir)).to.equal(1);
    const rows = await db.all('SELECT key FROM entries');
    expect(rows).to.deep.equal([{ key: 'kept' }]);
    expect(await db.all('SELECT key FROM entry_metadata')).to.deep.equal([{ key: 'kept' }]);
  });

  it('runs compaction at start and removes orphan blobs and temp files', async () => {
    await put('gone', 'old');
    await put('live', 'new');
    await svc.delete('t1', 'default', 'gone');
    const orphan = await blobs.write('raw', Buffer.from('no row'));
    await writeFile(path.join(blobs.dir, '00', `${'0'.repeat(32)}.tmp`), 'half');
    svc.stop();
    await db.close();
    clock += 40 * DAY;
    await open();
    await svc.start();
    expect(await countBlobs(blobs.dir)).to.equal(1);
    expect(await readdir(path.join(blobs.dir, '00'))).to.not.include(`${'0'.repeat(32)}.tmp`);
    expect(await db.all('SELECT key FROM entries')).to.deep.equal([{ key: 'live' }]);
    expect(orphan.id).to.be.a('string');
  });

  it('purges every entry of a tenant and leaves others alone', async () => {
    await put('a', '1', 'gone');
    await put('b', '2', 'gone');
    await put('a', '3', 'stays');
    expect(await svc.purgeTenant('gone')).to.equal(2);
    expect(await svc.find('gone', 'default', 'a')).to.equal(undefined);
    expect((await svc.find('stays', 'default', 'a'))!.version).to.equal(1);
    expect(await countBlobs(blobs.dir)).to.equal(1);
  });

  it('tells listeners which entry ids a delete and a tenant purge made unreadable', async () => {
    const changes: Array<{ key?: string; removedIds?: number[] }> = [];
    svc.onChange((c) => changes.push({ key: c.key, removedIds: c.removedIds }));
    const v1 = await put('k', 'a');
    const v2 = await put('k', 'b');
    const other = await put('o', 'c');
    const t2 = await put('k', 'x', 't2');
    // A put leaves earlier versions readable: it names no removed ids.
    expect(changes.map((c) => c.removedIds)).to.deep.equal([undefined, undefined, undefined, undefined]);
    changes.length = 0;
    await svc.delete('t1', 'default', 'k');
    expect(changes).to.deep.equal([{ key: 'k', removedIds: [v1.id, v2.id].sort((a, b) => a - b) }]);
    changes.length = 0;
    await svc.purgeTenant('t1');
    expect(changes).to.have.length(1);
    // The purge removes the tombstoned versions and the live entry of t1, none of t2.
    expect([...changes[0]!.removedIds!].sort((a, b) => a - b)).to.deep.equal([v1.id, v2.id, other.id].sort((a, b) => a - b));
    expect(changes[0]!.removedIds).to.not.include(t2.id);
  });

  it('answers deleting an unknown or deleted key with 404', async () => {
    await put('k', 'a');
    await svc.delete('t1', 'default', 'k');
    for (const key of ['k', 'never']) {
      try {
        await svc.delete('t1', 'default', key);
        expect.fail('deleted');
      } catch (err) {
        expect((err as ProblemError).status).to.equal(404);
      }
    }
  });

  it('lists latest live versions in byte order with prefix, limit, offset and total', async () => {
    for (const k of ['b', 'a', 'a*x', 'a[1]', 'ab', 'é', 'Z', 'a?']) await put(k, k);
    await put('ab', 'v2');
    await put('dead', 'x');
    await svc.delete('t1', 'default', 'dead');
    const all = await svc.list('t1', 'default', '', 100, 0);
    expect(all.rows.map((r) => r.key)).to.deep.equal(['Z', 'a', 'a*x', 'a?', 'a[1]', 'ab', 'b', 'é']);
    expect(all.total).to.equal(8);
    expect(all.rows.find((r) => r.key === 'ab')!.version).to.equal(2);
    const a = await svc.list('t1', 'default', 'a', 2, 1);
    expect(a.rows.map((r) => r.key)).to.deep.equal(['a*x', 'a?']);
    expect(a.total).to.equal(5);
    expect((await svc.list('t1', 'default', 'a*', 10, 0)).rows.map((r) => r.key)).to.deep.equal(['a*x']);
    expect((await svc.list('t1', 'default', 'a[', 10, 0)).rows.map((r) => r.key)).to.deep.equal(['a[1]']);
    const past = await svc.list('t1', 'default', '', 10, 50);
    expect(past).to.deep.equal({ rows: [], total: 8 });
    expect(globPrefix('a*?[')).to.equal('a[*][?][[]*');
  });
});

describe('entry row cache', () => {
  const row = (version: number) => ({ version }) as never;
  it('serves what it was given and forgets a key on invalidate', async () => {
    const { RowCache } = await import('../../src/entries/row-cache.js');
    const c = new RowCache(100);
    const id = RowCache.id('t', 'ns', 'k');
    c.set(id, c.generation(id), row(1), true);
    expect(c.get(id)).to.deep.equal({ version: 1 });
    expect(c.get(id, 1)).to.equal(undefined);
    c.invalidate(id);
    expect(c.get(id)).to.equal(undefined);
  });
  it('drops a row read before a write that committed meanwhile', async () => {
    const { RowCache } = await import('../../src/entries/row-cache.js');
    const c = new RowCache(100);
    const id = RowCache.id('t', 'ns', 'k');
    const gen = c.generation(id); // a read starts
    c.invalidate(id); // a write commits
    c.set(id, gen, row(1), true); // the read finishes with the old row
    expect(c.get(id)).to.equal(undefined);
    const g2 = c.generation(id);
    c.clear();
    c.set(id, g2, row(2), true);
    expect(c.get(id)).to.equal(undefined);
  });
  it('keeps at most maxRows rows, evicting the least recently used key', async () => {
    const { RowCache } = await import('../../src/entries/row-cache.js');
    const c = new RowCache(2);
    for (const k of ['a', 'b']) c.set(k, c.generation(k), row(1), true);
    c.get('a');
    c.set('c', c.generation('c'), row(1), true);
    expect(c.get('b')).to.equal(undefined);
    expect(c.get('a')).to.not.equal(undefined);
    expect(c.get('c')).to.not.equal(undefined);
  });
});
