// The job lifecycle: queued -> running -> completed | failed. At most `concurrency` jobs run at once,
// started in submission order (FIFO over all tenants). The solver runs on the engine's own threads;
// this class only reacts to its callbacks on the event loop. Progress is kept in memory while a job
// runs and persisted at each transition. stop() cancels running jobs and leaves them queued, and
// start() re-queues whatever a crash left running, so an accepted job always runs to an end.
import { randomBytes } from 'node:crypto';
import { ProblemError } from '../errors.js';
import { jobView, type JobParams, type JobRow, type JobView, type Progress } from './job.js';
import { JobOutputs, OutputsAborted, type OutputStore } from './outputs.js';
import { engineParams, errorCode, SIM_CANCELLED, SIM_INVALID, solverUnavailable, type SimRun, type SimRunner } from './runner.js';
import type { JobStore, ListFilter } from './store.js';

export interface SchedulerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface JobSchedulerOptions {
  store: JobStore;
  outputs: OutputStore;
  runner: SimRunner;
  /** Jobs running at once (SVC_GATE_SIM_CONCURRENCY). */
  concurrency: number;
  log: SchedulerLogger;
  /** Unix seconds (fractional); tests move the clock. */
  now?: () => number;
  /** False for a tenant whose jobs must not run any more (deactivated). Default: always true. */
  tenantActive?: (tenantId: string) => boolean;
  /** How long stop() waits for cancelled jobs to settle before it gives up on them (ms). Default 30000. */
  stopTimeoutMs?: number;
}

export interface SubmitInput {
  tenantId: string;
  solver: string;
  namespace: string;
  outputKeyPrefix: string;
  params: JobParams;
}

interface Active {
  row: JobRow;
  run: SimRun | null;
  startedAt: number;
  done: number;
  total: number;
  settled: Promise<void>;
}

/** Thrown inside a run when the scheduler is stopping (the job goes back to the queue). */
class ShuttingDown extends Error {}

export function newJobId(): string {
  return `job_${randomBytes(12).toString('base64url')}`;
}

export class JobScheduler {
  private readonly queue: JobRow[] = [];
  private readonly active = new Map<string, Active>();
  private readonly now: () => number;
  private stopping = false;
  private started = false;

  constructor(private readonly opts: JobSchedulerOptions) {
    this.now = opts.now ?? (() => Date.now() / 1000);
  }

  /** Re-queue jobs left running by a crash, then start the queue (FIFO). */
  async start(): Promise<void> {
    const pending = await this.opts.store.recover();
    this.queue.push(...pending);
    this.started = true;
    if (pending.length > 0) this.opts.log.info({ jobs: pending.length }, 'simulation jobs queued from the previous run');
    this.pump();
  }

  /** Persist a queued job (durable when this resolves) and schedule it. */
  async submit(input: SubmitInput): Promise<JobRow> {
    if (this.stopping) throw new ProblemError(503, 'service_unavailable', 'the server is shutting down; submit the job again shortly');
    const steps = input.params.steps;
    const row = await this.opts.store.insert({
      jobId: newJobId(),
      tenantId: input.tenantId,
      solver: input.solver,
      namespace: input.namespace,
      outputKeyPrefix: input.outputKeyPrefix,
      params: input.params,
      stepsTotal: typeof steps === 'number' ? steps : 0,
      createdAt: this.now(),
    });
    this.queue.push(row);
    this.opts.log.info({ job_id: row.job_id, tenant_id: row.tenant_id, solver: row.solver }, 'simulation job queued');
    this.pump();
    return row;
  }

  /** The tenant's job with live progress; undefined for an unknown job or another tenant's. */
  async status(tenantId: string, jobId: string): Promise<JobView | undefined> {
    const row = await this.opts.store.get(tenantId, jobId);
    return row ? jobView(row, this.liveProgress(row)) : undefined;
  }

  /** The tenant's jobs, newest first, with live progress. */
  async list(tenantId: string, filter: ListFilter): Promise<JobView[]> {
    const rows = await this.opts.store.list(tenantId, filter);
    return rows.map((row) => jobView(row, this.liveProgress(row)));
  }

  /** Jobs running now (for tests and metrics). */
  get runningCount(): number {
    return this.active.size;
  }

  /** Jobs waiting to run (for metrics). */
  get queuedCount(): number {
    return this.queue.length;
  }

  /**
   * Cancel every running job and leave it queued (it runs again from the start at the next start);
   * resolves when they settled, or after stopTimeoutMs (a job that did not settle is still marked
   * running in the database, and start() re-queues it).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.queue.length = 0;
    const settling = [...this.active.values()].map((a) => {
      a.run?.cancel();
      return a.settled;
    });
    if (settling.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.opts.stopTimeoutMs ?? 30000);
    });
    const outcome = await Promise.race([Promise.allSettled(settling), timeout]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.opts.log.warn({ jobs: this.active.size }, 'simulation jobs did not stop in time; they are re-queued at the next start');
  }

  private liveProgress(row: JobRow): Progress | undefined {
    const a = this.active.get(row.job_id);
    if (row.status !== 'running' || !a) return undefined;
    return { steps_completed: a.done, steps_total: a.total, elapsed_s: Math.max(0, this.now() - a.startedAt) };
  }

  private pump(): void {
    while (this.started && !this.stopping && this.active.size < this.opts.concurrency && this.queue.length > 0) {
      const row = this.queue.shift()!;
      const a: Active = { row, run: null, startedAt: this.now(), done: 0, total: row.steps_total, settled: Promise.resolve() };
      this.active.set(row.job_id, a);
      a.settled = this.execute(a)
        .catch((err) => this.opts.log.error({ err, job_id: row.job_id }, 'simulation job bookkeeping failed'))
        .finally(() => {
          this.active.delete(row.job_id);
          this.pump();
        });
    }
  }

  private async execute(a: Active): Promise<void> {
    const { row } = a;
    const { store, log } = this.opts;
    a.startedAt = this.now();
    if (!(await store.markRunning(row.job_id, a.startedAt))) return;
    if (this.stopping) {
      await store.requeue(row.job_id);
      return;
    }
    log.info({ job_id: row.job_id, tenant_id: row.tenant_id, solver: row.solver }, 'simulation job started');
    const params = JSON.parse(row.params) as JobParams;
    let writeError: unknown = null;
    const outputs = new JobOutputs(this.opts.outputs, {
      jobId: row.job_id, tenantId: row.tenant_id, solver: row.solver, namespace: row.namespace, prefix: row.output_key_prefix, params,
    }, () => this.stopping, (err) => {
      writeError = err;
      a.run?.cancel();
    });
    try {
      if (this.opts.tenantActive && !this.opts.tenantActive(row.tenant_id)) {
        throw new ProblemError(401, 'invalid_api_key', `tenant ${row.tenant_id} was deactivated before the job ran`);
      }
      if (!this.opts.runner.solvers().includes(row.solver)) throw solverUnavailable(row.solver, this.opts.runner.solvers());
      a.run = this.opts.runner.simulate(row.solver, engineParams(params), {
        onProgress: (done, total) => {
          a.done = done;
          a.total = total;
        },
        onSnapshot: (step, t, fields) => outputs.snapshot(step, t, fields),
      });
      let result;
      try {
        result = await a.run.result;
      } catch (err) {
        // A cancel we asked for because a snapshot could not be stored: that error is the cause.
        throw errorCode(err) === SIM_CANCELLED && writeError !== null ? writeError : err;
      }
      if (this.stopping) throw new ShuttingDown();
      const stats = result.stats ?? {};
      const finalStep = finiteOr(stats.steps, a.done);
      await outputs.final(result.fields, finalStep, finiteOr(stats.t, null));
      if (this.stopping) throw new ShuttingDown();
      const finishedAt = this.now();
      const progress = { steps_completed: a.done, steps_total: a.total, elapsed_s: finishedAt - a.startedAt };
      const keys = outputs.keys;
      await outputs.commit((tx) => store.markCompleted(tx, row.job_id, { finishedAt, progress, outputs: keys, stats }));
      log.info({ job_id: row.job_id, outputs: keys.length, elapsed_s: progress.elapsed_s }, 'simulation job completed');
    } catch (err) {
      await outputs.discard();
      if (this.stopping && (err instanceof ShuttingDown || err instanceof OutputsAborted || errorCode(err) === SIM_CANCELLED)) {
        await store.requeue(row.job_id);
        log.info({ job_id: row.job_id }, 'simulation job cancelled by shutdown; queued for the next start');
        return;
      }
      const problem = this.problemOf(err, row);
      const finishedAt = this.now();
      await store.markFailed(row.job_id, {
        finishedAt,
        progress: { steps_completed: a.done, steps_total: a.total, elapsed_s: finishedAt - a.startedAt },
        error: problem,
      });
      log.warn({ job_id: row.job_id, code: problem.code, detail: problem.detail }, 'simulation job failed');
    }
  }

  /** The problem object a failed job shows: the engine's words for its own errors, nothing internal otherwise. */
  private problemOf(err: unknown, row: JobRow): Record<string, unknown> {
    if (err instanceof ProblemError) return err.body();
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (code === SIM_INVALID) return new ProblemError(400, 'invalid_request', message).body();
    if (code !== undefined && code.startsWith('ERR_TTS_')) {
      return new ProblemError(500, 'internal_error', `the ${row.solver} solver failed: ${message}`).body();
    }
    this.opts.log.error({ err, job_id: row.job_id }, 'simulation job failed unexpectedly');
    return new ProblemError(500, 'internal_error',
      `the job failed unexpectedly; the server log has the details under job_id ${row.job_id}`).body();
  }
}

function finiteOr<T>(v: unknown, fallback: T): number | T {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
