// How the nodes share the job queue (the store): the timings of claims, leases and heartbeats,
// written once. A node holds each job it runs under a lease its heartbeat renews; a node that dies
// stops renewing, and after at most one lease another node takes the job and runs it from the start.

/** Seconds a claim holds a job unless the holder's heartbeat renews it: how long a dead node's job waits. */
export const JOB_LEASE_S = 15;

/** Seconds between heartbeats: a third of the lease, so a job survives two late beats of a busy node. */
export const JOB_HEARTBEAT_S = 5;

/**
 * The longest a worker waits before it looks at the queue again (and for cancel requests of the jobs
 * it holds); a submit on the node, or a bus message from another node, wakes it at once.
 */
export const JOB_POLL_MS = 500;

/** Tenants a look at the queue considers at most (those with the fewest jobs running first). */
export const CLAIM_CANDIDATES_MAX = 256;

/** How often a node polls the store for the end of a job another node holds and was asked to cancel. */
export const CANCEL_POLL_MS = 100;

/** The cluster bus topic that wakes the workers: a job was queued, or a cancel asked. */
export const JOBS_TOPIC = 'jobs';

export interface LeaseTimings {
  leaseS: number;
  heartbeatS: number;
  pollMs: number;
}

export const LEASE_TIMINGS: LeaseTimings = { leaseS: JOB_LEASE_S, heartbeatS: JOB_HEARTBEAT_S, pollMs: JOB_POLL_MS };
