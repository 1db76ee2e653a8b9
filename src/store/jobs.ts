// The storage boundary of simulation jobs: every state change durable when its promise resolves.
// The scheduler depends on this interface only; src/store/sqlite/jobs.ts implements it over SQLite.
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

export interface JobStore {
  /** Insert a queued job; resolves once it is durable (what a 202 promises). */
  insert(job: NewJob): Promise<JobRow>;
  /** The tenant's job, or undefined (also when it belongs to another tenant). */
  get(tenantId: string, jobId: string): Promise<JobRow | undefined>;
  /** The tenant's jobs, newest first. */
  list(tenantId: string, filter: ListFilter): Promise<JobRow[]>;
  /**
   * Start-up: jobs that were running or paused when the server stopped go back to queued from the
   * start (their state was in memory; their outputs were never committed); returns every queued job
   * in FIFO order.
   */
  recover(): Promise<JobRow[]>;
  /** queued -> running, a first start; false when the job is no longer queued. */
  markRunning(jobId: string, startedAt: number): Promise<boolean>;
  /** running -> queued, time-sliced: its progress (and started_at) kept. */
  markPaused(jobId: string, progress: Progress): Promise<void>;
  /** queued -> running, a paused job's next turn. */
  markResumed(jobId: string): Promise<void>;
  /** running -> completed, inside the transaction that commits the outputs. */
  markCompleted(tx: Transaction, jobId: string, at: CompletedAt): Promise<void>;
  /**
   * queued or running -> failed with a problem object, in `tx` (the transaction that commits the
   * snapshots it keeps, `outputs`) or a write of its own.
   */
  markFailed(jobId: string, at: FailedAt, tx?: Transaction): Promise<void>;
  /** running or paused -> queued from the start (cancelled by a shutdown; it runs again at the next start). */
  requeue(jobId: string): Promise<void>;
  /** Remove every job of a tenant (after its retention period; its outputs go with its entries). */
  purgeTenant(tenantId: string): Promise<number>;
  /**
   * Several nodes over one queue: take the oldest job that is queued and not held, or whose holder's
   * lease ran out (a node that died: its run starts again from the start, attempts counted), and
   * hold it running under `lease`. No two callers ever take the same job. Undefined: nothing to take.
   */
  claim(lease: Lease): Promise<JobRow | undefined>;
  /** Extend the leases `owner` still holds among `jobIds` (its heartbeat); returns those ids (a job taken over is not among them). */
  renew(lease: Lease, jobIds: string[]): Promise<string[]>;
}
