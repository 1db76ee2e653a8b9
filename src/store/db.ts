// SQLite (npm sqlite3) in WAL mode with two connections: one reader for queries, one writer behind a
// single group-commit queue. The driver interleaves statements of concurrent callers on a shared
// connection, so every write goes through write(): jobs queued while a transaction commits are
// combined into the next BEGIN IMMEDIATE ... COMMIT (one fsync for many requests), each job isolated
// by a SAVEPOINT so one failing job does not undo the others.
import { open as openFile } from 'node:fs/promises';
import sqlite3 from 'sqlite3';

export type SqlValue = string | number | bigint | null | Buffer | Uint8Array;
export type Params = SqlValue[] | Record<string, SqlValue>;

/** Statements available inside a write job (all on the writer connection, inside the transaction). */
export interface Tx {
  run(sql: string, params?: Params): Promise<{ changes: number; lastID: number }>;
  get<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T | undefined>;
  all<T = Record<string, unknown>>(sql: string, params?: Params): Promise<T[]>;
}

export interface Migration {
  /** Owner of the tables (e.g. 'entries', 'gate', 'jobs'); versions count per component. */
  component: string;
  version: number;
  sql: string;
}

interface Job {
  fn: (tx: Tx) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
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

export class Database {
  private readonly queue: Job[] = [];
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
    await w.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000;');
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
   * (durably). `fn` must only issue statements on `tx`: no other I/O, no long computation.
   */
  write<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Wait for queued writes, then close both connections. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.draining || this.queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    await this.reader.close();
    await this.writer.close();
  }

  /** PRAGMA integrity_check on the writer connection ("ok" when sound). */
  async integrityCheck(): Promise<string> {
    const rows = await this.writer.all<{ integrity_check: string }>('PRAGMA integrity_check');
    return rows.map((r) => r.integrity_check).join('; ');
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.commitBatch(batch);
      }
    } finally {
      this.draining = false;
    }
  }

  private async commitBatch(batch: Job[]): Promise<void> {
    if (batch.length === 1) return this.commitOne(batch[0]!);
    const w = this.writer;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = [];
    try {
      await w.exec('BEGIN IMMEDIATE');
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
      await w.exec('BEGIN IMMEDIATE');
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
    (await w.all<{ component: string; version: number }>('SELECT component, version FROM schema_migrations'))
      .map((r) => `${r.component}@${r.version}`),
  );
  const pending = migrations
    .filter((m) => !done.has(`${m.component}@${m.version}`))
    .sort((a, b) => a.component.localeCompare(b.component) || a.version - b.version);
  for (const m of pending) {
    await w.exec('BEGIN IMMEDIATE');
    try {
      await w.exec(m.sql);
      await w.run('INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)',
        [m.component, m.version, Date.now() / 1000]);
      await w.exec('COMMIT');
    } catch (err) {
      await w.exec('ROLLBACK').catch(() => undefined);
      throw new Error(`migration ${m.component}@${m.version} failed: ${(err as Error).message}`);
    }
  }
}
