// PostgreSQL (npm pg) for several nodes over one database: a pool of connections, each write one
// transaction in READ COMMITTED whose correctness under concurrency rests on row locks taken by its own
// statements (an UPSERT of a counter row, SELECT ... FOR UPDATE, conditional UPDATEs), never on a
// process-local queue: every node runs the same statements against the same rows.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { pendingMigrations, type Migration } from '../migration.js';
import type { StoreLogger } from '../stores.js';
import type { Transaction } from '../transaction.js';

/**
 * A statement of fixed text that each connection parses and plans once (a named statement of the
 * protocol), for the writes most requests cause: for the usage write, parsing and planning took
 * PostgreSQL about as much CPU as running it. Only for fixed text (a connection keeps each name
 * prepared until it closes; text built per call stays a plain string) and only for statements that
 * return no rows: a migration by a newer node may change a table's columns, and PostgreSQL fails a
 * prepared statement whose result columns changed.
 */
export interface Prepared {
  readonly name: string;
  readonly text: string;
}

export function prepared(text: string): Prepared {
  return { name: `ttstore_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`, text };
}

export type Statement = string | Prepared;

/** Statements inside a transaction (one pooled connection between BEGIN and COMMIT). */
export interface PgTx {
  query<T extends object = Record<string, unknown>>(sql: Statement, params?: unknown[]): Promise<{ rows: T[]; rowCount: number | null }>;
}

export const asTransaction = (c: PgTx): Transaction => c as unknown as Transaction;
export const asPgTx = (t: Transaction): PgTx => t as unknown as PgTx;

/** bigint (COUNT, BIGSERIAL ids, byte counts) and numeric (SUM) read as JS numbers: all stay below 2^53. */
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (v: string) => Number(v);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  },
} as pg.CustomTypesConfig;

/** SQLSTATEs after which a transaction is retried from the start: deadlock, serialization failure. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_TRIES = 5;

/** Key of the advisory lock that serializes migrations across nodes starting at once. */
const MIGRATION_LOCK = 0x7474_7374; // "ttst"

export class PgDatabase {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connect and apply pending migrations (one node at a time, under an advisory lock). */
  static async open(url: string, migrations: Migration[], log: StoreLogger, poolSize = 10): Promise<PgDatabase> {
    const pool = new pg.Pool({ connectionString: url, max: poolSize, types: TYPES });
    // An idle connection that the server drops must not crash the process; the next query reconnects.
    pool.on('error', (err) => log.error({ err }, 'an idle PostgreSQL connection failed; it is replaced'));
    try {
      await migrate(pool, migrations);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PgDatabase(pool);
  }

  /** One statement in a transaction of its own (reads see every committed write of every node). */
  async all<T extends object = Record<string, unknown>>(sql: Statement, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query<T>(sql, params)).rows;
  }

  async get<T extends object = Record<string, unknown>>(sql: Statement, params: unknown[] = []): Promise<T | undefined> {
    return (await this.pool.query<T>(sql, params)).rows[0];
  }

  /** Rows a single statement changed. */
  async run(sql: Statement, params: unknown[] = []): Promise<number> {
    return (await this.pool.query(sql, params)).rowCount ?? 0;
  }

  /**
   * Run `fn` in one transaction; resolves once it committed. A deadlock or serialization failure
   * (two nodes locking rows in different orders) rolls back and runs `fn` again, so `fn` must only
   * issue statements on its connection.
   */
  async tx<T>(fn: (c: PgTx) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.pool.connect();
      try {
        await c.query('BEGIN');
        const value = await fn(c as PgTx);
        await c.query('COMMIT');
        return value;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        if (attempt < MAX_TRIES && RETRYABLE.has((err as { code?: string }).code ?? '')) continue;
        throw err;
      } finally {
        c.release();
      }
    }
  }

  /** Run `fn` on a connection of its own once one is free (statements outside a transaction each commit). */
  async connected<T>(fn: (c: PgTx) => Promise<T>): Promise<T> {
    const c = await this.pool.connect();
    try {
      return await fn(c as PgTx);
    } finally {
      c.release();
    }
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** Wait for checked-out connections to come back, then close the pool. */
  close(): Promise<void> {
    return this.pool.end();
  }
}

/**
 * Take the advisory lock named `name` until `c`'s transaction ends: callers deciding on one tenant's
 * rows (a count, then an insert) take it first, so nodes decide one at a time. Each later statement
 * under READ COMMITTED reads a fresh snapshot, with every write committed before the lock was granted.
 */
export async function lockFor(c: PgTx, ...name: string[]): Promise<void> {
  await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(name)]);
}

/** SQLSTATE of a unique violation. */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string })?.code === '23505';

async function migrate(pool: pg.Pool, migrations: Migration[]): Promise<void> {
  const c = await pool.connect();
  try {
    // Session lock: a second node starting at once waits here, then finds every migration applied.
    await c.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        component TEXT NOT NULL, version INTEGER NOT NULL, applied_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (component, version))`);
      const done = new Set(
        (await c.query<{ component: string; version: number }>('SELECT component, version FROM schema_migrations')).rows.map(
          (r) => `${r.component}@${r.version}`,
        ),
      );
      for (const m of pendingMigrations(migrations, done)) {
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query('INSERT INTO schema_migrations (component, version, applied_at) VALUES ($1, $2, $3)', [
            m.component,
            m.version,
            Date.now() / 1000,
          ]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => undefined);
          throw new Error(`migration ${m.component}@${m.version} failed: ${(err as Error).message}`);
        }
      }
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    c.release();
  }
}
