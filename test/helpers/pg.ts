// Throw-away PostgreSQL databases for tests, made in the cluster TTSTORE_TEST_DATABASE_URL names
// (scripts/pg.sh start prints one); unset, the PostgreSQL cases are skipped.
import { createHash } from 'node:crypto';
import type pg from 'pg';

export const TEST_DATABASE_URL = process.env.TTSTORE_TEST_DATABASE_URL || undefined;

/** `url` with its database name replaced. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  // Loaded here, not at the top: every test server's helper imports this file, and the GPU check's
  // carry leaves the PostgreSQL client out.
  const { default: Pg } = await import('pg');
  const c = new Pg.Client({ connectionString: TEST_DATABASE_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of its own, named after `seed` (the same seed: the same database, as a restarted server
 * over the same data dir finds its rows) or fresh and random; created when missing.
 */
export async function testDatabase(seed?: string): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) throw new Error('TTSTORE_TEST_DATABASE_URL is not set');
  const name = `ttstore_test_${createHash('sha256')
    .update(seed ?? `${process.pid}-${Date.now()}-${Math.random()}`)
    .digest('hex')
    .slice(0, 16)}`;
  await admin(async (c) => {
    try {
      await c.query(`CREATE DATABASE ${name}`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err; // exists already
    }
  });
  return {
    url: withDatabase(TEST_DATABASE_URL, name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => undefined)),
  };
}
