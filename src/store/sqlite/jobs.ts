// Jobs over SQLite: every state change is one write on the group-commit queue, durable when the
// promise resolves. Reads go to the reader connection.
import { asTx, type Database, type Tx } from './db.js';
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
import { completedValues, failedValues, holdOf, JOB_SQL, newJobValues, progressValues, sqliteParams } from '../sql.js';
import type { Transaction } from '../transaction.js';

export class SqliteJobStore implements JobStore {
  constructor(private readonly db: Database) {}

  /** The single writer (BEGIN IMMEDIATE, on every connection to the file) makes the count and the insert one step. */
  insert(job: NewJob, maxQueued: number): Promise<Queued> {
    return this.db.write(async (tx) => {
      const { n } = (await tx.get<{ n: number }>(q(JOB_SQL.countQueued), [job.tenantId]))!;
      if (n >= maxQueued) return { outcome: 'full', queued: n };
      return { outcome: 'inserted', row: (await tx.get<JobRow>(INSERT, newJobValues(job)))! };
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

  async held(): Promise<Array<Hold & { jobId: string }>> {
    return (await this.db.all<{ job_id: string; lease_owner: string; attempts: number }>(JOB_SQL.held)).map(holdOf);
  }

  async candidates(owner: string, now: number, limit: number): Promise<ClaimCandidate[]> {
    const rows = await this.db.all<JobRow & { running_elsewhere: number }>(q(JOB_SQL.candidates), [owner, now, limit]);
    return rows.map(({ running_elsewhere, ...row }) => ({ row, runningElsewhere: running_elsewhere }));
  }

  /** The single writer serializes claims, so a claimable job is taken by one caller only. */
  claim(lease: Lease, jobId?: string): Promise<JobRow | undefined> {
    return this.db.write((tx) => tx.get<JobRow>(CLAIM, [lease.owner, lease.now + lease.leaseS, lease.now, jobId ?? null]));
  }

  renew(lease: Lease, held: HeldJob[]): Promise<string[]> {
    return this.db.write(async (tx) => {
      const renewed: string[] = [];
      for (const h of held) {
        const fence = [h.jobId, h.owner, h.attempt];
        if (h.progress) await tx.run(q(JOB_SQL.progress), [...fence, ...progressValues(h.progress)]);
        if (await tx.get(q(JOB_SQL.renew), [...fence, lease.now + lease.leaseS])) renewed.push(h.jobId);
      }
      return renewed;
    });
  }

  async markPaused(jobId: string, hold: Hold, progress: Progress): Promise<void> {
    await this.db.write((tx) => tx.run(q(JOB_SQL.paused), [jobId, hold.owner, hold.attempt, ...progressValues(progress)]));
  }

  async markCharged(jobId: string, hold: Hold, periods: number): Promise<void> {
    await this.db.write((tx) => tx.run(q(JOB_SQL.charged), [jobId, hold.owner, hold.attempt, periods]));
  }

  async markResumed(jobId: string, hold: Hold): Promise<void> {
    await this.db.write((tx) => tx.run(q(JOB_SQL.resumed), [jobId, hold.owner, hold.attempt]));
  }

  async markCompleted(tx: Transaction, jobId: string, hold: Hold, at: CompletedAt): Promise<void> {
    const { changes } = await asTx(tx).run(q(JOB_SQL.completed), completedValues(jobId, hold, at));
    if (changes !== 1) throw new LeaseLost(jobId);
  }

  async markFailed(jobId: string, at: FailedAt, hold?: Hold, tx?: Transaction): Promise<boolean> {
    const update = async (t: Tx) => {
      const { changes } = hold
        ? await t.run(q(JOB_SQL.failedHeld), [jobId, hold.owner, hold.attempt, ...failedValues(at)])
        : await t.run(q(JOB_SQL.failedUnheld), [jobId, ...failedValues(at)]);
      if (hold && changes !== 1) throw new LeaseLost(jobId);
      return changes === 1;
    };
    return tx ? update(asTx(tx)) : this.db.write(update);
  }

  async requeue(jobId: string, hold: Hold): Promise<void> {
    await this.db.write((tx) => tx.run(q(JOB_SQL.requeue), [jobId, hold.owner, hold.attempt]));
  }

  async requestCancel(jobId: string, detail: string): Promise<void> {
    await this.db.write((tx) => tx.run(q(JOB_SQL.requestCancel), [jobId, detail]));
  }

  cancelTenant(tenantId: string, detail: string, at: number, error: Record<string, unknown>): Promise<string[]> {
    return this.db.write(async (tx) => {
      const failed = await tx.all<{ job_id: string }>(q(JOB_SQL.cancelTenantQueued), [tenantId, at, JSON.stringify(error)]);
      await tx.run(q(JOB_SQL.cancelTenantHeld), [tenantId, detail]);
      return failed.map((r) => r.job_id);
    });
  }

  async cancelRequests(owner: string): Promise<CancelRequest[]> {
    const rows = await this.db.all<{ job_id: string; cancel_requested: string }>(q(JOB_SQL.cancelRequests), [owner]);
    return rows.map((r) => ({ jobId: r.job_id, detail: r.cancel_requested }));
  }

  /** Remove every job of a tenant (after its retention period; its outputs go with its entries). */
  async purgeTenant(tenantId: string): Promise<number> {
    const { changes } = await this.db.write((tx) => tx.run('DELETE FROM sim_jobs WHERE tenant_id = ?', [tenantId]));
    return changes;
  }
}

const q = sqliteParams;
const CLAIM = q(JOB_SQL.claim(''));
const INSERT = q(JOB_SQL.insert);
