// A simulation job as the status and list endpoints show it (CONTRACT.md section 6, Simulation), from
// its stored row (src/store/jobs.ts). A paused job (time-sliced, section 8) is `queued` with its
// progress and started_at kept.
import type { JobParams, JobRow, JobStatus, Progress } from '../store/jobs.js';

// The routes see the status set and the parameters' type through the jobs feature, not the store.
export { JOB_STATUSES, type JobParams } from '../store/jobs.js';

/** A started job as the scheduler holds it, ahead of its row: running or paused (queued), and its progress. */
export interface LiveState {
  status: JobStatus;
  progress: Progress;
}

/** The body of GET /v1/simulation/status/{job_id} (and of each item of the list). */
export function jobView(row: JobRow, live?: LiveState) {
  const progress: Progress = live?.progress ?? {
    steps_completed: row.steps_completed,
    steps_total: row.steps_total,
    elapsed_s: row.elapsed_s,
  };
  return {
    job_id: row.job_id,
    status: live?.status ?? row.status,
    solver: row.solver,
    namespace: row.namespace,
    output_key_prefix: row.output_key_prefix,
    params: JSON.parse(row.params) as JobParams,
    progress,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    ...(row.status === 'completed'
      ? {
          outputs: row.outputs ? (JSON.parse(row.outputs) as string[]) : [],
          stats: row.stats ? (JSON.parse(row.stats) as Record<string, number>) : {},
        }
      : {}),
    ...(row.status === 'failed' && row.outputs ? { outputs: JSON.parse(row.outputs) as string[] } : {}),
    ...(row.status === 'failed' && row.error ? { error: JSON.parse(row.error) as Record<string, unknown> } : {}),
  };
}

export type JobView = ReturnType<typeof jobView>;
