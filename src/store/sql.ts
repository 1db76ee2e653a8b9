// SQL expressions both engines share (standard SQL over the same columns), written once.
import { DTYPES, ITEM_SIZE } from '../engine/types.js';
import type { CompletedAt, FailedAt, Hold, NewJob, Progress } from './jobs.js';

/** The bytes an entry stores, over a row of `entries` (the same rule as entries/storage-quota.ts storedBytesOf). */
export const STORED_BYTES_SQL = "(CASE WHEN blob_kind = 'cores' THEN stored_core_bytes ELSE original_bytes END)";

/** CandidateRow.bytes of the entry `e`: its cores as stored, or its values as float64. */
export const OPERAND_BYTES_SQL =
  `CASE WHEN e.blob_kind = 'cores' THEN e.stored_core_bytes ELSE e.original_bytes * CASE e.dtype ` +
  `${DTYPES.map((d) => `WHEN '${d}' THEN ${8 / ITEM_SIZE[d]}`).join(' ')} ELSE 8 END END`;

/**
 * The statements of the job queue (JobStore), written once for both engines in PostgreSQL's `$n`
 * placeholders (SQLite binds the same numbers as `?n`, see sqliteParams).
 */
const HELD = (owner: string, attempt: string) => `lease_owner = ${owner} AND attempts = ${attempt}`;

/** Not held by a live lease at `now`. */
const UNHELD = (now: string) => `(lease_expires_at IS NULL OR lease_expires_at < ${now})`;

/**
 * A job a claim may take at `now`: queued and not held (a paused job stays held by its node), or held
 * under a lease that ran out (its node died or stalled).
 */
const CLAIMABLE = (now: string) =>
  `status IN ('queued', 'running') AND ${UNHELD(now)}
   AND (status = 'queued' OR lease_expires_at IS NOT NULL)`;

/** What a failed job's row records, from placeholder $i on: finished_at, progress (3), problem, outputs kept. */
const failedSet = (i: number) =>
  `status = 'failed', finished_at = $${i}, steps_completed = $${i + 1}, steps_total = $${i + 2}, elapsed_s = $${i + 3},
  error = $${i + 4}, outputs = $${i + 5}, lease_owner = NULL, lease_expires_at = NULL`;

export const JOB_SQL = {
  held: `SELECT job_id, lease_owner, attempts FROM sim_jobs WHERE lease_owner IS NOT NULL AND status IN ('queued', 'running')`,
  /** $1.. newJobValues's. */
  insert: `INSERT INTO sim_jobs (job_id, tenant_id, solver, namespace, output_key_prefix, params, status, steps_total, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8) RETURNING *`,
  /** $1 tenant: its queued jobs, paused ones included (the cap JobStore.insert keeps). */
  countQueued: `SELECT CAST(count(*) AS INTEGER) AS n FROM sim_jobs WHERE tenant_id = $1 AND status = 'queued'`,
  /** $1 owner, $2 now, $3 limit. */
  candidates: `SELECT j.*, CAST((SELECT count(*) FROM sim_jobs r WHERE r.tenant_id = j.tenant_id AND r.status = 'running'
      AND (r.lease_owner IS NULL OR r.lease_owner <> $1)) AS INTEGER) AS running_elsewhere
    FROM sim_jobs j WHERE j.seq IN (SELECT min(seq) FROM sim_jobs WHERE ${CLAIMABLE('$2')} GROUP BY tenant_id)
    ORDER BY running_elsewhere, j.seq LIMIT $3`,
  /**
   * $1 owner, $2 until, $3 now, $4 job_id or NULL (the oldest); `lock`: the engine's row lock of the
   * pick. A cancel asked of a dead holder stays: the new holder stops the job at its first look.
   */
  claim: (lock: string) => `UPDATE sim_jobs SET status = 'running', lease_owner = $1, lease_expires_at = $2, attempts = attempts + 1,
      started_at = $3, steps_completed = 0, elapsed_s = 0
    WHERE seq = (SELECT seq FROM sim_jobs WHERE ${CLAIMABLE('$3')} AND (CAST($4 AS TEXT) IS NULL OR job_id = $4) ORDER BY seq LIMIT 1 ${lock})
    RETURNING *`,
  /** $1 job, $2 owner, $3 attempt, $4 until. */
  renew: `UPDATE sim_jobs SET lease_expires_at = $4 WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status IN ('queued', 'running')
    RETURNING job_id`,
  /** $1 job, $2 owner, $3 attempt, $4.. progress. */
  progress: `UPDATE sim_jobs SET steps_completed = $4, steps_total = $5, elapsed_s = $6
    WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status = 'running'`,
  paused: `UPDATE sim_jobs SET status = 'queued', steps_completed = $4, steps_total = $5, elapsed_s = $6
    WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status = 'running'`,
  /** $1 job, $2 owner, $3 attempt, $4 periods paid. */
  charged: `UPDATE sim_jobs SET charged_periods = CASE WHEN charged_periods < $4 THEN $4 ELSE charged_periods END
    WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status IN ('queued', 'running')`,
  resumed: `UPDATE sim_jobs SET status = 'running' WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status = 'queued'`,
  /** $1 job, $2 owner, $3 attempt, $4 finished_at, progress, outputs, stats. */
  completed: `UPDATE sim_jobs SET status = 'completed', finished_at = $4, steps_completed = $5, steps_total = $6, elapsed_s = $7,
      outputs = $8, stats = $9, error = NULL, lease_owner = NULL, lease_expires_at = NULL
    WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status = 'running'`,
  /** $1 job, $2 owner, $3 attempt, then failedSet's. */
  failedHeld: `UPDATE sim_jobs SET ${failedSet(4)} WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status IN ('queued', 'running')`,
  /** $1 job, then failedSet's; its finished_at is the time the lease is judged at. */
  failedUnheld: `UPDATE sim_jobs SET ${failedSet(2)} WHERE job_id = $1 AND status = 'queued' AND ${UNHELD('$2')}`,
  requeue: `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0, lease_owner = NULL,
      lease_expires_at = NULL
    WHERE job_id = $1 AND ${HELD('$2', '$3')} AND status IN ('queued', 'running')`,
  /** $1 job, $2 detail. */
  requestCancel: `UPDATE sim_jobs SET cancel_requested = $2 WHERE job_id = $1 AND status IN ('queued', 'running')`,
  /** $1 tenant, $2 now, $3 the problem (JSON): its queued jobs no node holds fail. */
  cancelTenantQueued: `UPDATE sim_jobs SET status = 'failed', finished_at = $2, error = $3
    WHERE tenant_id = $1 AND status = 'queued' AND ${UNHELD('$2')} RETURNING job_id`,
  /** $1 tenant, $2 detail: the held ones are asked to stop. */
  cancelTenantHeld: `UPDATE sim_jobs SET cancel_requested = $2 WHERE tenant_id = $1 AND status IN ('queued', 'running')`,
  cancelRequests: `SELECT job_id, cancel_requested FROM sim_jobs WHERE lease_owner = $1 AND cancel_requested IS NOT NULL
    AND status IN ('queued', 'running')`,
};

/** A row of JOB_SQL.held as a Hold. */
export const holdOf = (r: { job_id: string; lease_owner: string; attempts: number }) => ({
  jobId: r.job_id,
  owner: r.lease_owner,
  attempt: r.attempts,
});

/**
 * Jobs a process started before leases existed (running or paused, no holder) go back to queued from
 * the start when the schema gains cancel_requested: their runs' state was in memory.
 */
export const RELEASE_UNLEASED_SQL = `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0
  WHERE lease_owner IS NULL AND (status = 'running' OR (status = 'queued' AND started_at IS NOT NULL))`;

/** JOB_SQL.insert's values. */
export const newJobValues = (job: NewJob): Array<string | number> => [
  job.jobId,
  job.tenantId,
  job.solver,
  job.namespace,
  job.outputKeyPrefix,
  JSON.stringify(job.params),
  job.stepsTotal,
  job.createdAt,
];

/**
 * The run-time periods a job's runs paid for (JobStore.markCharged), so that a job released by a
 * shutdown or taken over from a dead node is not charged again for the run time its tenant paid.
 */
export const CHARGED_PERIODS_SQL = 'ALTER TABLE sim_jobs ADD COLUMN charged_periods INTEGER NOT NULL DEFAULT 0';

/**
 * The queued jobs of a tenant found without reading its ended ones: JobStore.insert counts them while
 * it holds the writer (SQLite) or the tenant's lock (PostgreSQL), whatever the tenant's history.
 */
export const QUEUED_INDEX_SQL = "CREATE INDEX sim_jobs_queued ON sim_jobs (tenant_id) WHERE status = 'queued'";

/** A progress's values in the order of the statements' placeholders. */
export const progressValues = (p: Progress): number[] => [p.steps_completed, p.steps_total, p.elapsed_s];

/** A failed job's values in failedSet's order. */
export const failedValues = (at: FailedAt): Array<string | number | null> => [
  at.finishedAt,
  ...progressValues(at.progress),
  JSON.stringify(at.error),
  at.outputs && at.outputs.length > 0 ? JSON.stringify(at.outputs) : null,
];

/** JOB_SQL.completed's values. */
export const completedValues = (jobId: string, hold: Hold, at: CompletedAt): Array<string | number> => [
  jobId,
  hold.owner,
  hold.attempt,
  at.finishedAt,
  ...progressValues(at.progress),
  JSON.stringify(at.outputs),
  JSON.stringify(at.stats),
];

/** PostgreSQL's `$n` placeholders as SQLite's `?n` (the same numbers bind the same values). */
export const sqliteParams = (sql: string): string => sql.replace(/\$(\d+)/g, '?$1');

/**
 * An SQL condition that holds when the entry whose id is `idColumn` matches every (name, canonical
 * value) pair: one primary-key probe of entry_metadata (entry_id, name) per filter. `param` binds a
 * value and returns its placeholder, in the order the placeholders appear.
 */
export function metadataMatchSql(pairs: Array<[string, string]>, idColumn: string, param: (value: string) => string): string {
  const sql = pairs
    .map(
      ([name, value]) =>
        `EXISTS (SELECT 1 FROM entry_metadata m WHERE m.entry_id = ${idColumn} AND m.name = ${param(name)} AND m.value_json = ${param(value)})`,
    )
    .join(' AND ');
  return sql || '1 = 1';
}
