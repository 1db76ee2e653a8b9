// Jobs over SQLite: every state change is one write on the group-commit queue, durable when the
// promise resolves. Reads go to the reader connection.
import { asTx, type Database, type Tx } from './db.js';
import type { CompletedAt, FailedAt, JobRow, JobStore, Lease, ListFilter, NewJob, Progress } from '../jobs.js';
import { claimableJobSql, claimSetSql, type ClaimParams } from '../sql.js';
import type { Transaction } from '../transaction.js';

export class SqliteJobStore implements JobStore {
  constructor(private readonly db: Database) {}

  /** Insert a queued job; resolves once it is durable (what a 202 promises). */
  async insert(job: NewJob): Promise<JobRow> {
    return this.db.write(async (tx) => {
      await tx.run(
        `INSERT INTO sim_jobs (job_id, tenant_id, solver, namespace, output_key_prefix, params, status, steps_total, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
        [
          job.jobId,
          job.tenantId,
          job.solver,
          job.namespace,
          job.outputKeyPrefix,
          JSON.stringify(job.params),
          job.stepsTotal,
          job.createdAt,
        ],
      );
      return (await tx.get<JobRow>('SELECT * FROM sim_jobs WHERE job_id = ?', [job.jobId]))!;
    });
  }

  /** The tenant's job, or undefined (also when it belongs to another tenant). */
  get(tenantId: string, jobId: string): Promise<JobRow | undefined> {
    return this.db.get<JobRow>('SELECT * FROM sim_jobs WHERE job_id = ? AND tenant_id = ?', [jobId, tenantId]);
  }

  /** The tenant's jobs, newest first. */
  list(tenantId: string, filter: ListFilter): Promise<JobRow[]> {
    const where = ['tenant_id = $tenant'];
    const params: Record<string, string | number> = { $tenant: tenantId, $limit: filter.limit };
    if (filter.namespace !== undefined) {
      where.push('namespace = $ns');
      params.$ns = filter.namespace;
    }
    if (filter.status !== undefined) {
      where.push('status = $status');
      params.$status = filter.status;
    }
    return this.db.all<JobRow>(`SELECT * FROM sim_jobs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $limit`, params);
  }

  /**
   * Start-up: jobs that were running or paused when the server stopped go back to queued from the
   * start (their state was in memory; their outputs were never committed); returns every queued job
   * in FIFO order.
   */
  async recover(): Promise<JobRow[]> {
    await this.db.write((tx) =>
      tx.run(
        `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0
       WHERE status = 'running' OR (status = 'queued' AND started_at IS NOT NULL)`,
      ),
    );
    return this.db.all<JobRow>(`SELECT * FROM sim_jobs WHERE status IN ('queued', 'running') ORDER BY seq`);
  }

  /** queued -> running, a first start; false when the job is no longer queued. */
  async markRunning(jobId: string, startedAt: number): Promise<boolean> {
    const { changes } = await this.db.write((tx) =>
      tx.run(
        `UPDATE sim_jobs SET status = 'running', started_at = ?, attempts = attempts + 1, steps_completed = 0, elapsed_s = 0
       WHERE job_id = ? AND status = 'queued'`,
        [startedAt, jobId],
      ),
    );
    return changes === 1;
  }

  /** running -> queued, time-sliced: its progress (and started_at) kept. */
  async markPaused(jobId: string, progress: Progress): Promise<void> {
    await this.db.write((tx) =>
      tx.run(
        `UPDATE sim_jobs SET status = 'queued', steps_completed = ?, steps_total = ?, elapsed_s = ?
       WHERE job_id = ? AND status = 'running'`,
        [progress.steps_completed, progress.steps_total, progress.elapsed_s, jobId],
      ),
    );
  }

  /** queued -> running, a paused job's next turn. */
  async markResumed(jobId: string): Promise<void> {
    await this.db.write((tx) => tx.run(`UPDATE sim_jobs SET status = 'running' WHERE job_id = ? AND status = 'queued'`, [jobId]));
  }

  /** running -> completed, inside the transaction that commits the outputs. */
  async markCompleted(tx: Transaction, jobId: string, at: CompletedAt): Promise<void> {
    await asTx(tx).run(
      `UPDATE sim_jobs SET status = 'completed', finished_at = ?, steps_completed = ?, steps_total = ?, elapsed_s = ?,
         outputs = ?, stats = ?, error = NULL
       WHERE job_id = ? AND status = 'running'`,
      [
        at.finishedAt,
        at.progress.steps_completed,
        at.progress.steps_total,
        at.progress.elapsed_s,
        JSON.stringify(at.outputs),
        JSON.stringify(at.stats),
        jobId,
      ],
    );
  }

  /**
   * queued or running -> failed with a problem object, in `tx` (the transaction that commits the
   * snapshots it keeps, `outputs`) or a write of its own.
   */
  async markFailed(jobId: string, at: FailedAt, tx?: Transaction): Promise<void> {
    const update = (t: Tx) =>
      t.run(
        `UPDATE sim_jobs SET status = 'failed', finished_at = ?, steps_completed = ?, steps_total = ?, elapsed_s = ?, error = ?,
         outputs = ?
       WHERE job_id = ? AND status IN ('queued', 'running')`,
        [
          at.finishedAt,
          at.progress.steps_completed,
          at.progress.steps_total,
          at.progress.elapsed_s,
          JSON.stringify(at.error),
          at.outputs && at.outputs.length > 0 ? JSON.stringify(at.outputs) : null,
          jobId,
        ],
      );
    if (tx) await update(asTx(tx));
    else await this.db.write(update);
  }

  /** running or paused -> queued from the start (cancelled by a shutdown; it runs again at the next start). */
  async requeue(jobId: string): Promise<void> {
    await this.db.write((tx) =>
      tx.run(
        `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0, lease_owner = NULL,
         lease_expires_at = NULL
       WHERE job_id = ? AND status IN ('queued', 'running')`,
        [jobId],
      ),
    );
  }

  /** Remove every job of a tenant (after its retention period; its outputs go with its entries). */
  async purgeTenant(tenantId: string): Promise<number> {
    const { changes } = await this.db.write((tx) => tx.run('DELETE FROM sim_jobs WHERE tenant_id = ?', [tenantId]));
    return changes;
  }

  /** The single writer serializes claims, so the oldest claimable job is taken by one caller only. */
  claim(lease: Lease): Promise<JobRow | undefined> {
    return this.db.write((tx) =>
      tx.get<JobRow>(
        `UPDATE sim_jobs SET ${claimSetSql(NAMED)}
         WHERE seq = (SELECT seq FROM sim_jobs WHERE ${claimableJobSql(NAMED)} ORDER BY seq LIMIT 1)
         RETURNING *`,
        leaseParams(lease),
      ),
    );
  }

  async renew(lease: Lease, jobIds: string[]): Promise<string[]> {
    const rows = await this.db.write((tx) =>
      tx.all<{ job_id: string }>(
        `UPDATE sim_jobs SET lease_expires_at = $until
         WHERE lease_owner = $owner AND status IN ('queued', 'running') AND job_id IN (SELECT value FROM json_each($ids))
         RETURNING job_id`,
        { $owner: lease.owner, $until: lease.now + lease.leaseS, $ids: JSON.stringify(jobIds) },
      ),
    );
    return rows.map((r) => r.job_id);
  }
}

const NAMED: ClaimParams = { owner: '$owner', until: '$until', now: '$now' };

const leaseParams = (lease: Lease) => ({ $owner: lease.owner, $until: lease.now + lease.leaseS, $now: lease.now });
