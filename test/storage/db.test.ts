// The SQLite writer queue: each write job is all or nothing, alone or batched with others.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/store/db.js';

const MIGRATION = { component: 'test', version: 1, sql: 'CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)' };

describe('database writes', () => {
  let dir: string;
  let db: Database;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-db-'));
    db = await Database.open(path.join(dir, 'db.sqlite'), [MIGRATION]);
  });
  afterEach(async () => {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  const rows = () => db.all<{ k: string; v: number }>('SELECT k, v FROM t ORDER BY k');

  it('a job alone commits when it succeeds and leaves nothing when it fails', async () => {
    expect(await db.write(async (tx) => (await tx.run('INSERT INTO t VALUES (?, ?)', ['a', 1])).changes)).to.equal(1);
    expect(await rows()).to.deep.equal([{ k: 'a', v: 1 }]);
    const err = await db.write(async (tx) => {
      await tx.run('INSERT INTO t VALUES (?, ?)', ['b', 2]);
      await tx.run('INSERT INTO t VALUES (?, ?)', ['a', 3]); // primary key taken
    }).then(() => null, (e: unknown) => e);
    expect(String(err)).to.match(/SQLITE_CONSTRAINT/);
    expect(await rows()).to.deep.equal([{ k: 'a', v: 1 }]);
    await db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['c', 4]));
    expect(await rows()).to.deep.equal([{ k: 'a', v: 1 }, { k: 'c', v: 4 }]);
  });

  it('jobs queued together commit together, and a failing one undoes only itself', async () => {
    const jobs = [
      db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['x', 1])),
      db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['y', 2])),
      db.write(async (tx) => {
        await tx.run('INSERT INTO t VALUES (?, ?)', ['z', 3]);
        throw new Error('job failed');
      }),
      db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['w', 4])),
    ];
    const settled = await Promise.allSettled(jobs);
    expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(await rows()).to.deep.equal([{ k: 'w', v: 4 }, { k: 'x', v: 1 }, { k: 'y', v: 2 }]);
  });
});
