// The SQLite writer queue: each write job is all or nothing, alone or batched with others, and one
// owner's queue of large jobs never stands in front of another owner's job.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database, WRITE_COST_BUDGET } from '../../src/store/sqlite/db.js';

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
    const err = await db
      .write(async (tx) => {
        await tx.run('INSERT INTO t VALUES (?, ?)', ['b', 2]);
        await tx.run('INSERT INTO t VALUES (?, ?)', ['a', 3]); // primary key taken
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(String(err)).to.match(/SQLITE_CONSTRAINT/);
    expect(await rows()).to.deep.equal([{ k: 'a', v: 1 }]);
    await db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['c', 4]));
    expect(await rows()).to.deep.equal([
      { k: 'a', v: 1 },
      { k: 'c', v: 4 },
    ]);
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
    expect(await rows()).to.deep.equal([
      { k: 'w', v: 4 },
      { k: 'x', v: 1 },
      { k: 'y', v: 2 },
    ]);
  });

  it('a job of another lane waits for at most one transaction of a lane with many large jobs queued', async () => {
    const order: string[] = [];
    const job = (name: string) => async (tx: Parameters<Parameters<Database['write']>[0]>[0]) => {
      order.push(name);
      await tx.run('INSERT INTO t VALUES (?, ?)', [name, order.length]);
    };
    const big = Array.from({ length: 10 }, (_, i) => db.write(job(`big${i}`), { lane: 'tenant:a', cost: WRITE_COST_BUDGET }));
    const small = db.write(job('small'), { lane: 'meter', cost: 1 });
    await Promise.all([...big, small]);
    // big0 was already running when the others were queued; then one more big job at most.
    expect(order.indexOf('small'), order.join(' ')).to.be.at.most(2);
    expect(order.filter((n) => n.startsWith('big'))).to.deep.equal(Array.from({ length: 10 }, (_, i) => `big${i}`));
  });

  it('a large job commits alone: a small job queued behind it does not share (and wait for) its transaction', async () => {
    let shared: boolean | null = null;
    const writes = [
      db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['first', 0])),
      db.write((tx) => tx.run('INSERT INTO t VALUES (?, ?)', ['large', 1]), { lane: 'a', cost: WRITE_COST_BUDGET / 2 }),
      db.write(
        async (tx) => {
          // Its own transaction sees the large job's row; the reader sees it only once committed.
          const inTx = (await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM t WHERE k = 'large'"))!.n;
          const committed = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM t WHERE k = 'large'"))!.n;
          shared = inTx === 1 && committed === 0;
          await tx.run('INSERT INTO t VALUES (?, ?)', ['small', 2]);
        },
        { lane: 'b', cost: 1 },
      ),
    ];
    await Promise.all(writes);
    expect(shared).to.equal(false);
    expect((await rows()).map((r) => r.k)).to.deep.equal(['first', 'large', 'small']);
  });
});
