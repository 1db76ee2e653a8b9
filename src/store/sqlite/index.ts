// The embedded default: every repository over one SQLite file in WAL mode (db.ts), its schema
// migrated on open.
import type { StoreLogger, Stores } from '../stores.js';
import { Database, type Migration } from './db.js';
import { SqliteEntryStore } from './entries.js';
import { SqliteJobStore } from './jobs.js';
import { ENTRY_MIGRATIONS } from './migrations/entries.js';
import { GATE_MIGRATIONS } from './migrations/gate.js';
import { JOB_MIGRATIONS } from './migrations/jobs.js';
import { SqliteTenantStore } from './tenants.js';
import { SqliteUsageStore } from './usage.js';

/** The schema of every component. */
export const MIGRATIONS: Migration[] = [...ENTRY_MIGRATIONS, ...GATE_MIGRATIONS, ...JOB_MIGRATIONS];

export interface SqliteStores extends Stores {
  db: Database;
}

/** Open (creating and migrating) the database `file` and the repositories over it. */
export async function openSqliteStores(file: string, log?: StoreLogger): Promise<SqliteStores> {
  const db = await Database.open(file, MIGRATIONS);
  return {
    db,
    entries: new SqliteEntryStore(db, log),
    tenants: new SqliteTenantStore(db),
    usage: new SqliteUsageStore(db),
    jobs: new SqliteJobStore(db),
    ping: () => db.ping(),
    close: () => db.close(),
  };
}
