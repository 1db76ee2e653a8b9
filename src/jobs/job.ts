// A simulation job as stored (one row of sim_jobs) and as the status and list endpoints show it
// (CONTRACT.md section 6, Simulation). A paused job (time-sliced, section 8) is `queued` with its
// progress and started_at kept.

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

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
