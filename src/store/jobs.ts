// The storage boundary of simulation jobs: every state change durable when its promise resolves.
// The scheduler depends on this interface only; src/store/sqlite/jobs.ts and src/store/postgres/jobs.ts
// implement it.
import type { Transaction } from './transaction.js';

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A job as stored: one row of sim_jobs. */
export interface JobRow {
  seq: number;
  job_id: string;
  tenant_id: string;
  solver: string;
  namespace: string;
  output_key_prefix: string;
  params: string;
  status: JobStatus;
  steps_completed: number;
  steps_total: number;
  elapsed_s: number;
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  outputs: string | null;
  stats: string | null;
  error: string | null;
  /** The node holding the job (JobStore.claim), until lease_expires_at (unix seconds). */
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Why another node asked the holder to stop the job (JobStore.requestCancel). */
  cancel_requested: string | null;
  /** Run-time periods its runs paid for (JobStore.markCharged): a later run charges only past them. */
  charged_periods: number;
}

export interface Progress {
  steps_completed: number;
  steps_total: number;
  /** Run time, seconds: time running, not queued or paused. */
  elapsed_s: number;
}

/** A job's parameters as validated at submission (JSON values; defaults filled in). */
export type JobParams = Record<string, unknown>;

export interface NewJob {
  jobId: string;
  tenantId: string;
  solver: string;
  namespace: string;
  outputKeyPrefix: string;
  params: JobParams;
  stepsTotal: number;
  createdAt: number;
}

export interface FailedAt {
  finishedAt: number;
  progress: Progress;
  error: Record<string, unknown>;
  /** Snapshots the job keeps (committed in the same transaction). */
  outputs?: string[];
}

export interface CompletedAt {
  finishedAt: number;
  progress: Progress;
  outputs: string[];
  stats: Record<string, number>;
}

export interface ListFilter {
  namespace?: string;
  status?: JobStatus;
  limit: number;
}

/** Who takes a job from the shared queue, and for how long its hold lasts unless renewed. */
export interface Lease {
  /** The node's id (unique per process). */
  owner: string;
  /** Unix seconds now. */
  now: number;
  /** Seconds the lease runs from `now`. */
  leaseS: number;
}

/**
 * A node's hold on one run of a job: the fence of every write the run makes. A run whose job was
 * taken over (another owner, or a later attempt) changes nothing.
 */
export interface Hold {
  owner: string;
  attempt: number;
}

/** A held job at a heartbeat, with the progress other nodes then read; no progress: paused (its row has it). */
export interface HeldJob extends Hold {
  jobId: string;
  progress?: Progress;
}

/** A tenant's oldest job a claim may take, and its jobs running on other nodes than the asker. */
export interface ClaimCandidate {
  row: JobRow;
  runningElsewhere: number;
}

/** What JobStore.insert did: queued the job, or refused it because its tenant holds `queued` jobs, its cap. */
export type Queued = { outcome: 'inserted'; row: JobRow } | { outcome: 'full'; queued: number };

/** A job another node asked its holder to stop (JobStore.requestCancel). */
export interface CancelRequest {
  jobId: string;
  detail: string;
}

/** Thrown by a write fenced by a Hold whose run no longer holds the job: nothing was written. */
export class LeaseLost extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} is no longer held by this run (its lease ran out and another run took it)`);
    this.name = 'LeaseLost';
  }
}

/**
 * The storage boundary of simulation jobs, and their queue: the store is the queue every node with
 * the worker role claims from, under leases its heartbeat renews.
 */
export interface JobStore {
  /**
   * Insert a queued job unless its tenant already holds `maxQueued` queued jobs (paused ones included)
   * on every node: the count and the insert are one step, so concurrent submits from any number of
   * nodes never take a tenant past its cap. Resolves once the job is durable (what a 202 promises).
   */
  insert(job: NewJob, maxQueued: number): Promise<Queued>;
  /** The tenant's job, or undefined (also when it belongs to another tenant). */
  get(tenantId: string, jobId: string): Promise<JobRow | undefined>;
  /** The tenant's jobs, newest first. */
  list(tenantId: string, filter: ListFilter): Promise<JobRow[]>;
  /** The runs holding a job now (queued or running under a lease), to find those of a dead process at a start. */
  held(): Promise<Array<Hold & { jobId: string }>>;
  /**
   * Per tenant with a job a claim may take, its oldest such job (at most `limit` tenants, those with
   * the fewest jobs running first), with its jobs running on other nodes than `owner`.
   */
  candidates(owner: string, now: number, limit: number): Promise<ClaimCandidate[]>;
  /**
   * Take the oldest job (or `jobId`) that is queued and not held, or whose holder's lease ran out (a
   * node that died: its run starts again from the start, attempts counted), and hold it running
   * under `lease`. No two callers ever take the same job. Undefined: nothing (or not that job) to take.
   */
  claim(lease: Lease, jobId?: string): Promise<JobRow | undefined>;
  /**
   * The heartbeat: extend the leases of the runs in `held` that still hold their job and record
   * their progress; returns the ids renewed (a job taken over, or ended, is not among them).
   */
  renew(lease: Lease, held: HeldJob[]): Promise<string[]>;
  /**
   * The run-time periods the job's runs have paid for, when the run holding it paid for its `periods`-th
   * (never lowered): a run after it (a shutdown released the job, or its node died) starts paid up to there.
   */
  markCharged(jobId: string, hold: Hold, periods: number): Promise<void>;
  /** running -> queued, time-sliced: its progress (and started_at) kept, still held. */
  markPaused(jobId: string, hold: Hold, progress: Progress): Promise<void>;
  /** queued -> running, a paused job's next turn on its node. */
  markResumed(jobId: string, hold: Hold): Promise<void>;
  /** running -> completed, inside the transaction that commits the outputs; LeaseLost (rolling it back) when the run lost its job. */
  markCompleted(tx: Transaction, jobId: string, hold: Hold, at: CompletedAt): Promise<void>;
  /**
   * -> failed with a problem object, in `tx` (the transaction that commits the snapshots it keeps,
   * `outputs`) or a write of its own. With `hold`: the run's job, LeaseLost when it lost it. Without:
   * a queued job no node holds (false when it is held, started or ended).
   */
  markFailed(jobId: string, at: FailedAt, hold?: Hold, tx?: Transaction): Promise<boolean>;
  /** Held -> queued from the start, not held (its run was stopped by a shutdown): another node may take it at once. */
  requeue(jobId: string, hold: Hold): Promise<void>;
  /** Ask the node holding a queued or running job to stop it with a `cancelled` problem saying `detail`. */
  requestCancel(jobId: string, detail: string): Promise<void>;
  /**
   * Every job of the tenant: the queued ones no node holds fail now with `error`, the held ones are
   * asked to stop (requestCancel with `detail`). Returns the ids of those that failed now.
   */
  cancelTenant(tenantId: string, detail: string, at: number, error: Record<string, unknown>): Promise<string[]>;
  /** The stop requests for jobs `owner` holds. */
  cancelRequests(owner: string): Promise<CancelRequest[]>;
  /** Remove every job of a tenant (after its retention period; its outputs go with its entries). */
  purgeTenant(tenantId: string): Promise<number>;
}
