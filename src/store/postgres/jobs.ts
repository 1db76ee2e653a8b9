// Jobs over PostgreSQL (sim_jobs): every state change is one conditional UPDATE, durable when its
// promise resolves; a transition whose starting state another node changed first changes nothing.
import type { CompletedAt, FailedAt, JobRow, JobStore, Lease, ListFilter, NewJob, Progress } from '../jobs.js';
import { claimableJobSql, claimSetSql } from '../sql.js';
import type { Transaction } from '../transaction.js';
import { asPgTx, type PgDatabase } from './db.js';

export class PgJobStore implements JobStore {
  constructor(private readonly db: PgDatabase) {}

  async insert(job: NewJob): Promise<JobRow> {
    return (await this.db.get<JobRow>(
      `INSERT INTO sim_jobs (job_id, tenant_id, solver, namespace, output_key_prefix, params, status, steps_total, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8) RETURNING *`,
      [job.jobId, job.tenantId, job.solver, job.namespace, job.outputKeyPrefix, JSON.stringify(job.params), job.stepsTotal, job.createdAt],
    ))!;
  }

  get(tenantId: string, jobId: string): Promise<JobRow | undefined> {
    return this.db.get<JobRow>('SELECT * FROM sim_jobs WHERE job_id = $1 AND tenant_id = $2', [jobId, tenantId]);
  }

  list(tenantId: string, filter: ListFilter): Promise<JobRow[]> {
    const params: unknown[] = [tenantId, filter.limit];
    const where = ['tenant_id = $1'];
    if (filter.namespace !== undefined) where.push(`namespace = $${params.push(filter.namespace)}`);
    if (filter.status !== undefined) where.push(`status = $${params.push(filter.status)}`);
    return this.db.all<JobRow>(`SELECT * FROM sim_jobs WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $2`, params);
  }

  async recover(): Promise<JobRow[]> {
    await this.db.run(
      `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0
       WHERE status = 'running' OR (status = 'queued' AND started_at IS NOT NULL)`,
    );
    return this.db.all<JobRow>(`SELECT * FROM sim_jobs WHERE status IN ('queued', 'running') ORDER BY seq`);
  }

  async markRunning(jobId: string, startedAt: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE sim_jobs SET status = 'running', started_at = $2, attempts = attempts + 1, steps_completed = 0, elapsed_s = 0
       WHERE job_id = $1 AND status = 'queued'`,
      [jobId, startedAt],
    );
    return changed === 1;
  }

  async markPaused(jobId: string, progress: Progress): Promise<void> {
    await this.db.run(
      `UPDATE sim_jobs SET status = 'queued', steps_completed = $2, steps_total = $3, elapsed_s = $4
       WHERE job_id = $1 AND status = 'running'`,
      [jobId, progress.steps_completed, progress.steps_total, progress.elapsed_s],
    );
  }

  async markResumed(jobId: string): Promise<void> {
    await this.db.run(`UPDATE sim_jobs SET status = 'running' WHERE job_id = $1 AND status = 'queued'`, [jobId]);
  }

  async markCompleted(tx: Transaction, jobId: string, at: CompletedAt): Promise<void> {
    await asPgTx(tx).query(
      `UPDATE sim_jobs SET status = 'completed', finished_at = $2, steps_completed = $3, steps_total = $4, elapsed_s = $5,
         outputs = $6, stats = $7, error = NULL
       WHERE job_id = $1 AND status = 'running'`,
      [
        jobId,
        at.finishedAt,
        at.progress.steps_completed,
        at.progress.steps_total,
        at.progress.elapsed_s,
        JSON.stringify(at.outputs),
        JSON.stringify(at.stats),
      ],
    );
  }

  async markFailed(jobId: string, at: FailedAt, tx?: Transaction): Promise<void> {
    const sql = `UPDATE sim_jobs SET status = 'failed', finished_at = $2, steps_completed = $3, steps_total = $4, elapsed_s = $5,
         error = $6, outputs = $7
       WHERE job_id = $1 AND status IN ('queued', 'running')`;
    const params = [
      jobId,
      at.finishedAt,
      at.progress.steps_completed,
      at.progress.steps_total,
      at.progress.elapsed_s,
      JSON.stringify(at.error),
      at.outputs && at.outputs.length > 0 ? JSON.stringify(at.outputs) : null,
    ];
    if (tx) await asPgTx(tx).query(sql, params);
    else await this.db.run(sql, params);
  }

  async requeue(jobId: string): Promise<void> {
    await this.db.run(
      `UPDATE sim_jobs SET status = 'queued', started_at = NULL, steps_completed = 0, elapsed_s = 0, lease_owner = NULL,
         lease_expires_at = NULL
       WHERE job_id = $1 AND status IN ('queued', 'running')`,
      [jobId],
    );
  }

  purgeTenant(tenantId: string): Promise<number> {
    return this.db.run('DELETE FROM sim_jobs WHERE tenant_id = $1', [tenantId]);
  }

  /** The oldest claimable row, locked; rows other claimers hold locked meanwhile are skipped, not waited for. */
  claim(lease: Lease): Promise<JobRow | undefined> {
    const p = { owner: '$1', until: '$2', now: '$3' };
    return this.db.get<JobRow>(
      `UPDATE sim_jobs SET ${claimSetSql(p)}
       WHERE seq = (SELECT seq FROM sim_jobs WHERE ${claimableJobSql(p)} ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [lease.owner, lease.now + lease.leaseS, lease.now],
    );
  }

  async renew(lease: Lease, jobIds: string[]): Promise<string[]> {
    const rows = await this.db.all<{ job_id: string }>(
      `UPDATE sim_jobs SET lease_expires_at = $2
       WHERE lease_owner = $1 AND status IN ('queued', 'running') AND job_id = ANY($3::text[])
       RETURNING job_id`,
      [lease.owner, lease.now + lease.leaseS, jobIds],
    );
    return rows.map((r) => r.job_id);
  }
}
