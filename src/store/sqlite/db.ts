// SQLite (npm sqlite3) in WAL mode with two connections: one reader for queries, one writer behind a
// single group-commit queue. The driver interleaves statements of concurrent callers on a shared
// connection, so every write goes through write(): jobs queued while a transaction commits are
// combined into the next BEGIN IMMEDIATE ... COMMIT (one fsync for many requests), each job isolated
// by a SAVEPOINT so one failing job does not undo the others.
//
// Isolation between writers (CONTRACT.md section 8): each job names a lane (its owner: a tenant, the
// meter) and a cost (roughly the rows and pages it writes). A transaction takes jobs round-robin
// across lanes up to WRITE_COST_BUDGET, so one owner's many or large jobs never make a transaction
// long, and another owner's job waits at most for the transaction in progress and its own.
import { open as openFile } from 'node:fs/promises';
import sqlite3 from 'sqlite3';
import { pendingMigrations, type Migration } from '../migration.js';
import type { Transaction } from '../transaction.js';

export type SqlValue = string | number | bigint | null | Buffer | Uint8Array;
export type Params = SqlValue[] | Record<string, SqlValue>;

/** Statements available inside a write job (all on the writer connection, inside the transaction). */
export interface Tx {
  run(sql: string, params?: Params): Promise<{ changes: number; lastID: number }>;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
}

/** A write transaction handed to a service (opaque there) and back to a repository of this database. */
export const asTransaction = (tx: Tx): Transaction => tx as unknown as Transaction;
export const asTx = (t: Transaction): Tx => t as unknown as Tx;

export type { Migration };

/** Whose a write is and what it costs; see WRITE_COST_BUDGET. */
export interface WriteOptions {
  /** Jobs of one lane commit in order, and lanes take turns (default: the shared lane ''). */
  lane?: string;
  /** Rows and pages the job writes, roughly (default 1). */
  cost?: number;
  /**
   * false: the job's writes need not survive a power loss on their own (rows a later durable
   * transaction makes visible), so a transaction of such jobs only commits without an fsync. Default true.
   */
  durable?: boolean;
}

interface Job {
  fn: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  cost: number;
  durable: boolean;
}

function open(file: string, mode: number): Promise<sqlite3.Database> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, mode, (err) => (err ? reject(err) : resolve(db)));
  });
}

function connectionApi(db: sqlite3.Database): Tx & { exec(sql: string): Promise<void>; close(): Promise<void> } {
  return {
    run(sql, params = []) {
      return new Promise((resolve, reject) => {
        db.run(sql, params, function done(this: sqlite3.RunResult, err: Error | null) {
          if (err) reject(err);
          else resolve({ changes: this.changes, lastID: this.lastID });
        });
      });
    },
    get<T>(sql: string, params: Params = []) {
      return new Promise<T | undefined>((resolve, reject) => {
        db.get(sql, params, (err: Error | null, row: T | undefined) => (err ? reject(err) : resolve(row)));
      });
    },
    all<T>(sql: string, params: Params = []) {
      return new Promise<T[]>((resolve, reject) => {
        db.all(sql, params, (err: Error | null, rows: T[]) => (err ? reject(err) : resolve(rows)));
      });
    },
    exec(sql) {
      return new Promise((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
    },
    close() {
      return new Promise((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

const MAX_BATCH = 512;

/**
 * Cost one transaction may take on (in write()'s units, about one B-tree row or 4 KiB page written
 * each) before it commits and lets the next one start. Measured on the test host, the largest legal
 * entry (256 metadata names in 64 KiB: about 300 units) held the writer for about 11 ms in one
 * transaction, so 128 units are about 4 ms; entries split their writes to fit (write-pieces.ts).
 */
export const WRITE_COST_BUDGET = 128;

/**
 * A job costing more than this is committed on its own: small jobs (a metering flush, a put without
 * much metadata) that would share its transaction would wait for it for nothing.
 */
const SHARED_JOB_COST = WRITE_COST_BUDGET / 4;

export class Database {
  /** Queued jobs by lane; the Map's order is the lanes' turn order (a lane served moves to the back). */
  private readonly lanes = new Map<string, Job[]>();
  private queued = 0;
  /** The writer connection's PRAGMA synchronous: FULL (true) or NORMAL. */
  private syncFull = true;
  private draining = false;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly writer: ReturnType<typeof connectionApi>,
    private readonly reader: ReturnType<typeof connectionApi>,
  ) {}

  /**
   * Open (creating) the database file, set WAL and durability pragmas, run pending migrations. A new
   * file is created 0600 here, before SQLite opens it: SQLite gives its -wal and -shm files the
   * database file's mode, and would create the database itself 0644.
   */
  static async open(file: string, migrations: Migration[]): Promise<Database> {
    await (await openFile(file, 'a', 0o600)).close();
    const w = connectionApi(await open(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE | sqlite3.OPEN_FULLMUTEX));
    // synchronous=FULL: a COMMIT that returned survives power loss, not only a process crash.
    // busy_timeout first: switching to WAL waits for another process that has the file open.
    await w.exec('PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;');
    await migrate(w, migrations);
    const r = connectionApi(await open(file, sqlite3.OPEN_READONLY | sqlite3.OPEN_FULLMUTEX));
    await r.exec('PRAGMA busy_timeout = 10000; PRAGMA query_only = ON;');
    return new Database(file, w, r);
  }

  /** A read on the reader connection: sees every committed write, never a write in progress. */
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined> {
    return this.reader.get<T>(sql, params);
  }

  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]> {
    return this.reader.all<T>(sql, params);
  }

  /**
   * Run `fn` inside a write transaction; resolves with its result once the transaction has committed
   * (durably). `fn` must only issue statements on `tx`: no other I/O, no long computation. Work
   * that may exceed WRITE_COST_BUDGET is split by its caller into several writes (entries do so).
   */
  write<T>(fn: (tx: Tx) => Promise<T>, opts: WriteOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    const lane = opts.lane ?? '';
    return new Promise<T>((resolve, reject) => {
      let q = this.lanes.get(lane);
      if (!q) this.lanes.set(lane, (q = []));
      q.push({ fn, resolve: resolve as (v: unknown) => void, reject, cost: Math.max(0, opts.cost ?? 1), durable: opts.durable ?? true });
      this.queued++;
      if (!this.draining) void this.drain();
    });
  }

  /** Wait for queued writes, then close both connections. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining || this.queued > 0) await new Promise((r) => setTimeout(r, 5));
    await this.reader.close();
    await this.writer.close();
  }

  /** Resolves when the reader connection answers (health). */
  async ping(): Promise<void> {
    await this.reader.get('SELECT 1 AS one');
  }

  /** PRAGMA integrity_check on the writer connection ("ok" when sound). */
  async integrityCheck(): Promise<string> {
    const rows = await this.writer.all<{ integrity_check: string }>('PRAGMA integrity_check');
    return rows.map((r) => r.integrity_check).join('; ');
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queued > 0) await this.commitBatch(this.take());
    } finally {
      this.draining = false;
    }
  }

  /**
   * The jobs of the next transaction: rounds over the lanes in turn order, one job of each lane a
   * round, while the cost stays within WRITE_COST_BUDGET; the first job is taken whatever its cost,
   * and one over SHARED_JOB_COST only as the first. A lane that gave a job goes to the back of the
   * order, so the next transaction starts elsewhere.
   */
  private take(): Job[] {
    const out: Job[] = [];
    let cost = 0;
    for (let progress = true; progress && out.length < MAX_BATCH;) {
      progress = false;
      for (const [lane, q] of [...this.lanes]) {
        const job = q[0]!;
        if (
          out.length > 0 &&
          (job.cost > SHARED_JOB_COST || out[0]!.cost > SHARED_JOB_COST || cost + job.cost > WRITE_COST_BUDGET || out.length >= MAX_BATCH)
        )
          continue;
        q.shift();
        out.push(job);
        cost += job.cost;
        progress = true;
        this.lanes.delete(lane);
        if (q.length > 0) this.lanes.set(lane, q);
      }
    }
    this.queued -= out.length;
    return out;
  }

  /**
   * BEGIN IMMEDIATE, after setting the durability the jobs need. In WAL mode a commit with
   * synchronous=NORMAL is written but not fsynced; the next FULL commit's fsync covers it too.
   */
  private async begin(batch: Job[]): Promise<void> {
    const full = batch.some((j) => j.durable);
    if (full !== this.syncFull) {
      await this.writer.exec(`PRAGMA synchronous = ${full ? 'FULL' : 'NORMAL'}`);
      this.syncFull = full;
    }
    await this.writer.exec('BEGIN IMMEDIATE');
  }

  private async commitBatch(batch: Job[]): Promise<void> {
    if (batch.length === 1) return this.commitOne(batch[0]!);
    const w = this.writer;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = [];
    try {
      await this.begin(batch);
    } catch (err) {
      for (const job of batch) job.reject(err);
      return;
    }
    try {
      for (const job of batch) {
        await w.exec('SAVEPOINT job');
        try {
          const value = await job.fn(w);
          await w.exec('RELEASE job');
          outcomes.push({ ok: true, value });
        } catch (err) {
          await w.exec('ROLLBACK TO job; RELEASE job');
          outcomes.push({ ok: false, err });
        }
      }
      await w.exec('COMMIT');
    } catch (err) {
      await w.exec('ROLLBACK').catch(() => undefined);
      for (const job of batch) job.reject(err);
      return;
    }
    batch.forEach((job, i) => {
      const o = outcomes[i]!;
      if (o.ok) job.resolve(o.value);
      else job.reject(o.err);
    });
  }

  /**
   * A batch of one job (the usual case when writes do not overlap): the transaction is the job, so
   * no savepoint is needed, which saves two of the five round trips to SQLite's thread.
   */
  private async commitOne(job: Job): Promise<void> {
    const w = this.writer;
    try {
      await this.begin([job]);
    } catch (err) {
      job.reject(err);
      return;
    }
    let value: unknown;
    try {
      value = await job.fn(w);
    } catch (err) {
      await w.exec('ROLLBACK').catch(() => undefined);
      job.reject(err);
      return;
    }
    try {
      await w.exec('COMMIT');
    } catch (err) {
      await w.exec('ROLLBACK').catch(() => undefined);
      job.reject(err);
      return;
    }
    job.resolve(value);
  }
}

async function migrate(w: ReturnType<typeof connectionApi>, migrations: Migration[]): Promise<void> {
  await w.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    component TEXT NOT NULL, version INTEGER NOT NULL, applied_at REAL NOT NULL,
    PRIMARY KEY (component, version))`);
  const done = new Set(
    (await w.all<{ component: string; version: number }>('SELECT component, version FROM schema_migrations')).map(
      (r) => `${r.component}@${r.version}`,
    ),
  );
  for (const m of pendingMigrations(migrations, done)) {
    await w.exec('BEGIN IMMEDIATE');
    try {
      // Another process opening the same file may have applied it since the read above.
      if (await w.get('SELECT 1 FROM schema_migrations WHERE component = ? AND version = ?', [m.component, m.version])) {
        await w.exec('COMMIT');
        continue;
      }
      await w.exec(m.sql);
      await w.run('INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)', [
        m.component,
        m.version,
        Date.now() / 1000,
      ]);
      await w.exec('COMMIT');
    } catch (err) {
      await w.exec('ROLLBACK').catch(() => undefined);
      throw new Error(`migration ${m.component}@${m.version} failed: ${(err as Error).message}`);
    }
  }
}
