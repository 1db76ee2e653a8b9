// Every repository over one PostgreSQL database shared by several nodes (SVC_GATE_DATABASE_URL), its
// schema migrated on open under an advisory lock.
import type { StoreLogger, Stores } from '../stores.js';
import { PgDatabase } from './db.js';
import { PgEntryStore } from './entries.js';
import { PgJobStore } from './jobs.js';
import { PG_MIGRATIONS } from './migrations.js';
import { PgTenantStore } from './tenants.js';
import { PgUsageStore } from './usage.js';

export interface PgStores extends Stores {
  db: PgDatabase;
}

/** Connect to `url`, migrate its schema, and open the repositories over it. */
export async function openPgStores(url: string, log: StoreLogger = { error() {} }, poolSize?: number): Promise<PgStores> {
  const db = await PgDatabase.open(url, PG_MIGRATIONS, log, poolSize);
  return {
    db,
    entries: new PgEntryStore(db),
    tenants: new PgTenantStore(db),
    usage: new PgUsageStore(db),
    jobs: new PgJobStore(db),
    ping: () => db.ping(),
    close: () => db.close(),
  };
}
