// Schema of the simulation job system. `seq` orders jobs: ascending is the FIFO run order, descending
// the newest-first order of the list endpoint. A job's outputs are entries (src/entries); this table
// only names them.
import type { Migration } from '../db.js';
import { CHARGED_PERIODS_SQL, QUEUED_INDEX_SQL, RELEASE_UNLEASED_SQL } from '../../sql.js';

export const JOB_MIGRATIONS: Migration[] = [
  {
    component: 'jobs',
    version: 1,
    sql: `
      CREATE TABLE sim_jobs (
        seq               INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id            TEXT NOT NULL UNIQUE,
        tenant_id         TEXT NOT NULL,
        solver            TEXT NOT NULL,
        namespace         TEXT NOT NULL,
        output_key_prefix TEXT NOT NULL,
        params            TEXT NOT NULL,              -- JSON object, defaults filled in
        status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        steps_completed   INTEGER NOT NULL DEFAULT 0,
        steps_total       INTEGER NOT NULL DEFAULT 0,
        elapsed_s         REAL NOT NULL DEFAULT 0,
        attempts          INTEGER NOT NULL DEFAULT 0, -- runs started (a restart re-queues a running job)
        created_at        REAL NOT NULL,
        started_at        REAL,
        finished_at       REAL,
        outputs           TEXT,                       -- JSON list of entry keys (completed)
        stats             TEXT,                       -- JSON object from the solver (completed)
        error             TEXT                        -- JSON problem object (failed)
      );
      CREATE INDEX sim_jobs_tenant ON sim_jobs (tenant_id, seq);
      CREATE INDEX sim_jobs_pending ON sim_jobs (seq) WHERE status IN ('queued', 'running');
    `,
  },
  {
    component: 'jobs',
    version: 2,
    // Leases of a queue shared by several nodes (JobStore.claim): which node holds a job, until when.
    sql: `
      ALTER TABLE sim_jobs ADD COLUMN lease_owner TEXT;
      ALTER TABLE sim_jobs ADD COLUMN lease_expires_at REAL;
    `,
  },
  {
    component: 'jobs',
    version: 3,
    // A cancel asked on one node for a job another node runs: the holder reads it and stops the run.
    sql: `ALTER TABLE sim_jobs ADD COLUMN cancel_requested TEXT; ${RELEASE_UNLEASED_SQL};`,
  },
  {
    component: 'jobs',
    version: 4,
    sql: CHARGED_PERIODS_SQL,
  },
  {
    component: 'jobs',
    version: 5,
    sql: QUEUED_INDEX_SQL,
  },
];
