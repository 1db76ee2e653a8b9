// Jobs over PostgreSQL (sim_jobs): every state change is one conditional UPDATE, durable when its
// promise resolves; a transition whose starting state another node changed first changes nothing.
import {
  LeaseLost,
  type CancelRequest,
  type ClaimCandidate,
  type CompletedAt,
  type FailedAt,
  type HeldJob,
  type Hold,
  type JobRow,
  type JobStore,
  type Lease,
  type ListFilter,
  type NewJob,
  type Progress,
  type Queued,
} from '../jobs.js';
import { completedValues, failedValues, holdOf, JOB_SQL, newJobValues, progressValues } from '../sql.js';
import type { Transaction } from '../transaction.js';
import { asPgTx, lockFor, type PgDatabase } from './db.js';

export class PgJobStore implements JobStore {
  constructor(private readonly db: PgDatabase) {}

  /** Under the tenant's lock, so the count of one node's insert includes every insert committed before it. */
  insert(job: NewJob, maxQueued: number): Promise<Queued> {
    return this.db.tx(async (c) => {
      await lockFor(c, 'jobs', job.tenantId);
      const { n } = (await c.query<{ n: number }>(JOB_SQL.countQueued, [job.tenantId])).rows[0]!;
      if (n >= maxQueued) return { outcome: 'full', queued: n };
      return { outcome: 'inserted', row: (await c.query<JobRow>(JOB_SQL.insert, newJobValues(job))).rows[0]! };
    });
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

  async held(): Promise<Array<Hold & { jobId: string }>> {
    return (await this.db.all<{ job_id: string; lease_owner: string; attempts: number }>(JOB_SQL.held)).map(holdOf);
  }

  async candidates(owner: string, now: number, limit: number): Promise<ClaimCandidate[]> {
    const rows = await this.db.all<JobRow & { running_elsewhere: number }>(JOB_SQL.candidates, [owner, now, limit]);
    return rows.map(({ running_elsewhere, ...row }) => ({ row, runningElsewhere: running_elsewhere }));
  }

  /** The oldest claimable row, locked; rows other claimers hold locked meanwhile are skipped, not waited for. */
  claim(lease: Lease, jobId?: string): Promise<JobRow | undefined> {
    return this.db.get<JobRow>(CLAIM, [lease.owner, lease.now + lease.leaseS, lease.now, jobId ?? null]);
  }

  renew(lease: Lease, held: HeldJob[]): Promise<string[]> {
    return this.db.tx(async (c) => {
      const renewed: string[] = [];
      for (const h of held) {
        const fence = [h.jobId, h.owner, h.attempt];
        if (h.progress) await c.query(JOB_SQL.progress, [...fence, ...progressValues(h.progress)]);
        if ((await c.query(JOB_SQL.renew, [...fence, lease.now + lease.leaseS])).rowCount === 1) renewed.push(h.jobId);
      }
      return renewed;
    });
  }

  async markPaused(jobId: string, hold: Hold, progress: Progress): Promise<void> {
    await this.db.run(JOB_SQL.paused, [jobId, hold.owner, hold.attempt, ...progressValues(progress)]);
  }

  async markCharged(jobId: string, hold: Hold, periods: number): Promise<void> {
    await this.db.run(JOB_SQL.charged, [jobId, hold.owner, hold.attempt, periods]);
  }

  async markResumed(jobId: string, hold: Hold): Promise<void> {
    await this.db.run(JOB_SQL.resumed, [jobId, hold.owner, hold.attempt]);
  }

  async markCompleted(tx: Transaction, jobId: string, hold: Hold, at: CompletedAt): Promise<void> {
    const { rowCount } = await asPgTx(tx).query(JOB_SQL.completed, completedValues(jobId, hold, at));
    if (rowCount !== 1) throw new LeaseLost(jobId);
  }

  async markFailed(jobId: string, at: FailedAt, hold?: Hold, tx?: Transaction): Promise<boolean> {
    const [sql, params] = hold
      ? [JOB_SQL.failedHeld, [jobId, hold.owner, hold.attempt, ...failedValues(at)]]
      : [JOB_SQL.failedUnheld, [jobId, ...failedValues(at)]];
    const changed = tx ? ((await asPgTx(tx).query(sql, params)).rowCount ?? 0) : await this.db.run(sql, params);
    if (hold && changed !== 1) throw new LeaseLost(jobId);
    return changed === 1;
  }

  async requeue(jobId: string, hold: Hold): Promise<void> {
    await this.db.run(JOB_SQL.requeue, [jobId, hold.owner, hold.attempt]);
  }

  async requestCancel(jobId: string, detail: string): Promise<void> {
    await this.db.run(JOB_SQL.requestCancel, [jobId, detail]);
  }

  cancelTenant(tenantId: string, detail: string, at: number, error: Record<string, unknown>): Promise<string[]> {
    return this.db.tx(async (c) => {
      const failed = await c.query<{ job_id: string }>(JOB_SQL.cancelTenantQueued, [tenantId, at, JSON.stringify(error)]);
      await c.query(JOB_SQL.cancelTenantHeld, [tenantId, detail]);
      return failed.rows.map((r) => r.job_id);
    });
  }

  async cancelRequests(owner: string): Promise<CancelRequest[]> {
    const rows = await this.db.all<{ job_id: string; cancel_requested: string }>(JOB_SQL.cancelRequests, [owner]);
    return rows.map((r) => ({ jobId: r.job_id, detail: r.cancel_requested }));
  }

  purgeTenant(tenantId: string): Promise<number> {
    return this.db.run('DELETE FROM sim_jobs WHERE tenant_id = $1', [tenantId]);
  }
}

const CLAIM = JOB_SQL.claim('FOR UPDATE SKIP LOCKED');
