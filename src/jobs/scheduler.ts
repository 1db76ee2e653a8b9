// The job lifecycle (CONTRACT.md sections 6 and 8): queued -> running -> completed | failed, and
// running -> queued when a job is time-sliced. At most `concurrency` jobs run at once, in fair turns
// across tenants:
// - a free slot goes to the waiting tenant with the fewest jobs running, then to the one whose last
//   turn is oldest; within a tenant, jobs go in submission order (a paused job before later ones);
// - a job that has run for its quantum pauses when a tenant with fewer jobs running waits: the
//   solver thread stops at its next poll with its state in memory, the job goes back to `queued`
//   with its progress kept, and resumes where it stopped in its tenant's next turn;
// - each job has a run-time budget (params.max_seconds) and is charged CU for each started period of
//   run time, before that period runs (a run of a job an earlier run left, by a shutdown or a dead
//   node, starts with the periods that run paid); past the budget it fails with time_limit, without
//   the CU with quota_exceeded;
// - cancel (the tenant's, or a deactivation's) fails a queued job at once and stops a started one at
//   the solver's next poll. Jobs stopped this way (cancel, budget, quota) keep the snapshots they
//   stored; any other failure stores nothing.
// The solver runs on the engine's own threads; this class only reacts to its callbacks on the event
// loop.
//
// The store is the queue, shared by every node (src/jobs/lease.ts): a node with the worker role claims
// a job when it has a free slot, holds it under a lease its heartbeat renews, and writes progress and
// the end through the store, each write fenced by its hold (a run whose job was taken over writes
// nothing). The turns above hold across nodes: a claim goes to the tenant with the fewest jobs running
// on every node. A cancel asked on another node reaches the holder through the store (its poll) and,
// with Redis, a bus message. stop() cancels started jobs and releases them to the queue; a node that
// died releases nothing, so its jobs wait for their leases to run out and run again from the start,
// once (a paused run's state was in memory). So an accepted job always runs to an end.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ProblemError } from '../http/errors.js';
import { jobView, type JobView, type LiveState } from './job.js';
import { JobOutputs, OutputsAborted, type OutputStore } from './outputs.js';
import { maxSecondsOf, solverParamsOf } from './params.js';
import { ENGINE_CANCELLED, ENGINE_INVALID } from '../engine/index.js';
import { errorCode, solverUnavailable, type SimRun, type SimRunner } from './runner.js';
import { LeaseLost, type ClaimCandidate, type Hold, type JobRow, type JobStore, type ListFilter, type Progress } from '../store/jobs.js';
import { CANCEL_POLL_MS, CLAIM_CANDIDATES_MAX, LEASE_TIMINGS, type LeaseTimings } from './lease.js';

export interface SchedulerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** How the scheduler charges run time (the gate's meter behind it, wired by the composition root). */
export interface JobCharger {
  /** Seconds of run time one charge pays for. */
  readonly periodS: number;
  /**
   * Charge one period to the tenant; resolves once durable. Rejects, charging nothing, when the
   * tenant has no room left (a ProblemError: 402 quota_exceeded).
   */
  charge(tenantId: string): Promise<void>;
}

export interface JobSchedulerOptions {
  store: JobStore;
  outputs: OutputStore;
  runner: SimRunner;
  /** Jobs running at once (SVC_GATE_SIM_CONCURRENCY). */
  concurrency: number;
  /** Seconds a job runs before it yields to a waiting tenant (SVC_GATE_JOB_QUANTUM_S). Default 10. */
  quantumS?: number;
  /** Queued jobs one tenant may hold, running ones not counted (SVC_GATE_JOBS_QUEUED_PER_TENANT). Default 16. */
  queuedPerTenant?: number;
  /** Run-time charging; absent: run time costs nothing. */
  charger?: JobCharger;
  log: SchedulerLogger;
  /** Unix seconds (fractional); tests move the clock. */
  now?: () => number;
  /** False for a tenant whose jobs must not run any more (deactivated). Default: always true. */
  tenantActive?: (tenantId: string) => boolean;
  /** How long stop() waits for cancelled jobs to settle before it gives up on them (ms). Default 30000. */
  stopTimeoutMs?: number;
  /** False: this node never claims a job (SVC_GATE_ROLES without `worker`); it still queues, shows and cancels them. Default true. */
  worker?: boolean;
  /** Tells the other nodes to look at the queue now (a job was queued or a cancel asked), e.g. over the cluster bus. */
  announce?: () => void;
  /** Lease, heartbeat and poll timings; tests shorten them. Default lease.ts's. */
  timings?: LeaseTimings;
}

export interface SubmitInput {
  tenantId: string;
  solver: string;
  namespace: string;
  outputKeyPrefix: string;
  params: Record<string, unknown>;
}

/** How long cancel() waits for a started job to end before it answers with its status as it is. */
export const CANCEL_WAIT_MS = 5000;

/**
 * queued: waiting, never started; starting: given a slot, its solver not yet started; running;
 * pausing: asked to pause, still running until the solver says it stopped; paused: waiting, its
 * solver stopped with its state; ending: its solver done, outputs being stored or the failure
 * written.
 */
type Phase = 'queued' | 'starting' | 'running' | 'pausing' | 'paused' | 'ending';

/** A job this process holds that has not ended. */
interface Job {
  row: JobRow;
  phase: Phase;
  run: SimRun | null;
  /** Run time of the slices before the current one, seconds. */
  runBefore: number;
  /** When the current slice started (unix seconds). */
  sliceStart: number;
  /** The current slice has run its quantum. */
  quantumUsed: boolean;
  /** Run-time periods paid for so far, by this run and the earlier runs of the job (its row's charged_periods). */
  charged: number;
  maxSeconds: number;
  done: number;
  total: number;
  timer: NodeJS.Timeout | undefined;
  /**
   * Why the job is being stopped: the problem it fails with, 'shutdown' (it goes back to the queue),
   * or 'lost' (its lease was taken over: another run owns it, this one writes nothing).
   */
  stop: ProblemError | 'shutdown' | 'lost' | null;
  /** This run's hold on the job: the fence of its writes. */
  hold: Hold;
  /** Settles when the job has ended (its row is final, or re-queued by a shutdown). */
  ended: Promise<void>;
  end: () => void;
  /** The job's pause/resume writes, in order. */
  writes: Promise<unknown>;
  /** Its run time is final (its end is being written): no timer any more. */
  final: boolean;
}

export function newJobId(): string {
  return `job_${randomBytes(12).toString('base64url')}`;
}

/** The problem of a cancelled job (CONTRACT.md section 8). */
export function cancelledProblem(detail: string): ProblemError {
  return new ProblemError(409, 'cancelled', detail);
}

export class JobScheduler {
  /** Paused jobs this node holds, waiting for a slot, per tenant, in submission order. */
  private readonly waiting = new Map<string, Job[]>();
  /** Jobs holding a slot (starting, running, pausing, ending). */
  private readonly running = new Set<Job>();
  /** Every job not ended, by job_id. */
  private readonly jobs = new Map<string, Job>();
  /** Tenant -> the turn number of its last slot (round robin among equals). */
  private readonly lastTurn = new Map<string, number>();
  private turns = 0;
  private readonly now: () => number;
  private readonly quantumS: number;
  private readonly queuedPerTenant: number;
  private stopping = false;
  private started = false;
  /** This process's name on the jobs it holds (lease_owner). */
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  private readonly timings: LeaseTimings;
  /** Per tenant, its oldest job in the store a claim may take (as of the last look at the queue). */
  private remote = new Map<string, ClaimCandidate>();
  private pumping = false;
  private pumpAgain = false;
  private filling: Promise<void> = Promise.resolve();
  private checkingCancels = false;
  private beating: Promise<void> = Promise.resolve();
  private poller: NodeJS.Timeout | undefined;
  private heart: NodeJS.Timeout | undefined;

  constructor(private readonly opts: JobSchedulerOptions) {
    this.now = opts.now ?? (() => Date.now() / 1000);
    this.quantumS = opts.quantumS ?? 10;
    this.queuedPerTenant = opts.queuedPerTenant ?? 16;
    this.timings = opts.timings ?? LEASE_TIMINGS;
    LIVE_OWNERS.add(this.owner);
  }

  /**
   * Release the jobs a dead process of this machine held (a crash or SIGKILL: they run again from the
   * start now rather than when their leases run out), then (a worker) take jobs from the queue.
   * Jobs other live processes hold are left alone.
   */
  async start(): Promise<void> {
    const dead = (await this.opts.store.held()).filter((h) => this.deadHere(h.owner));
    for (const h of dead) await this.opts.store.requeue(h.jobId, h);
    if (dead.length > 0) this.opts.log.info({ jobs: dead.length }, 'simulation jobs of a previous process queued again');
    this.started = true;
    if (this.opts.worker === false) return;
    this.poller = setInterval(() => this.poke(), this.timings.pollMs);
    this.heart = setInterval(() => {
      this.beating = this.beat().catch((err) => this.opts.log.error({ err }, 'renewing the leases of simulation jobs failed'));
    }, this.timings.heartbeatS * 1000);
    this.pump();
  }

  /** An owner (hostname:pid:nonce) that is another, ended process of this machine (its pid gone, or now ours). */
  private deadHere(owner: string): boolean {
    const [host, pid] = owner.split(':');
    if (host !== hostname() || LIVE_OWNERS.has(owner)) return false;
    if (Number(pid) === process.pid) return true; // an earlier process with our pid (a container restarted)
    try {
      process.kill(Number(pid), 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH';
    }
  }

  /** Look at the queue, and for cancels of the jobs held here, now (another node queued a job or asked a cancel). */
  poke(): void {
    this.pump();
    if (this.jobs.size > 0 && !this.checkingCancels) {
      this.checkingCancels = true;
      void this.checkCancels()
        .catch((err) => this.opts.log.error({ err }, 'reading the cancel requests of simulation jobs failed'))
        .finally(() => (this.checkingCancels = false));
    }
  }

  /**
   * The engine's own checks of a job's params (the solver's table and its rules between params), so
   * that a job never fails for a param its submission accepted: 400 naming the param.
   */
  checkParams(solver: string, params: Record<string, unknown>): void {
    try {
      this.opts.runner.checkSimulation(solver, solverParamsOf(params));
    } catch (err) {
      if (errorCode(err) !== ENGINE_INVALID) throw err;
      const message = (err as Error).message;
      const param = /^param (\w+)/.exec(message)?.[1] ?? /^params (\w+)/.exec(message)?.[1] ?? /'(\w+)'/.exec(message)?.[1];
      throw new ProblemError(400, 'invalid_request', message, param ? { field: `params.${param}` } : {});
    }
  }

  /**
   * Persist a queued job (durable when this resolves) and schedule it; 429 too_many_jobs when the
   * tenant already holds its cap of queued jobs.
   */
  async submit(input: SubmitInput): Promise<JobRow> {
    if (this.stopping) throw new ProblemError(503, 'service_unavailable', 'the server is shutting down; submit the job again shortly');
    const { tenantId } = input;
    const steps = input.params.steps;
    const queued = await this.opts.store.insert(
      {
        jobId: newJobId(),
        tenantId,
        solver: input.solver,
        namespace: input.namespace,
        outputKeyPrefix: input.outputKeyPrefix,
        params: input.params,
        stepsTotal: typeof steps === 'number' ? steps : 0,
        createdAt: this.now(),
      },
      this.queuedPerTenant,
    );
    if (queued.outcome === 'full') {
      throw new ProblemError(
        429,
        'too_many_jobs',
        `tenant ${tenantId} already has ${queued.queued} queued simulation jobs, the most it may hold (running jobs not counted); submit again when one has started`,
        { queued: queued.queued, limit: this.queuedPerTenant },
        { 'Retry-After': String(this.quantumS) },
      );
    }
    const { row } = queued;
    this.opts.log.info({ job_id: row.job_id, tenant_id: row.tenant_id, solver: row.solver }, 'simulation job queued');
    this.pump();
    this.opts.announce?.();
    return row;
  }

  /** The tenant's job with live progress; undefined for an unknown job or another tenant's. */
  async status(tenantId: string, jobId: string): Promise<JobView | undefined> {
    const row = await this.opts.store.get(tenantId, jobId);
    return row ? jobView(row, this.live(row)) : undefined;
  }

  /** The tenant's jobs, newest first, with live progress. */
  async list(tenantId: string, filter: ListFilter): Promise<JobView[]> {
    const rows = await this.opts.store.list(tenantId, filter);
    return rows.map((row) => jobView(row, this.live(row)));
  }

  /**
   * Cancel the tenant's job: a queued one fails at once, a started one (running or paused) at its
   * solver's next poll; resolves with its status once it ended, or after CANCEL_WAIT_MS as it is then.
   * undefined: no such job of this tenant; 409 job_finished: it had already ended.
   */
  async cancel(tenantId: string, jobId: string): Promise<JobView | undefined> {
    const row = await this.opts.store.get(tenantId, jobId);
    if (!row) return undefined;
    if (row.status === 'completed' || row.status === 'failed') {
      throw new ProblemError(409, 'job_finished', `job ${jobId} has already ${row.status === 'completed' ? 'completed' : 'failed'}`, {
        job_id: jobId,
        job_status: row.status, // `status` is the problem's HTTP code
      });
    }
    const detail = 'cancelled by the tenant';
    const job = this.jobs.get(jobId);
    if (job) {
      await waitAtMost(this.stopJob(job, cancelledProblem(detail)), CANCEL_WAIT_MS);
    } else {
      const failed = await this.opts.store.markFailed(jobId, {
        finishedAt: this.now(),
        progress: progressOf(row),
        error: cancelledProblem(detail).body(),
      });
      if (failed) this.logFailedQueued(jobId);
      else {
        // Held by a node (this one, if it claimed it just now): its holder stops it and writes its end.
        await this.opts.store.requestCancel(jobId, detail);
        this.opts.announce?.();
        this.poke();
        await waitAtMost(this.ended(tenantId, jobId), CANCEL_WAIT_MS);
      }
    }
    return this.status(tenantId, jobId);
  }

  private logFailedQueued(jobId: string): void {
    this.opts.log.info({ job_id: jobId, code: 'cancelled' }, 'simulation job failed before it started');
  }

  /** Resolves when the job's row shows its end (it is held by another node). */
  private async ended(tenantId: string, jobId: string): Promise<void> {
    for (;;) {
      const row = await this.opts.store.get(tenantId, jobId);
      if (!row || row.status === 'completed' || row.status === 'failed' || this.stopping) return;
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
    }
  }

  /** Cancel every job of a tenant (deactivated): each fails with code cancelled; resolves when they ended. */
  async cancelTenant(tenantId: string, detail = `tenant ${tenantId} was deactivated`): Promise<void> {
    // Its queued jobs fail in the store; the ones other nodes hold are stopped by their holders.
    const failed = await this.opts.store.cancelTenant(tenantId, detail, this.now(), cancelledProblem(detail).body());
    for (const jobId of failed) this.logFailedQueued(jobId);
    this.opts.announce?.();
    const mine = [...this.jobs.values()].filter((j) => j.row.tenant_id === tenantId);
    if (mine.length > 0) this.opts.log.info({ tenant_id: tenantId, jobs: mine.length }, 'cancelling the simulation jobs of a tenant');
    await Promise.all(mine.map((j) => this.stopJob(j, cancelledProblem(detail))));
  }

  /** Jobs running now (for tests and metrics). */
  get runningCount(): number {
    return this.running.size;
  }

  /** Paused jobs held here, and the tenants with a job in the queue as of the last look (for metrics). */
  get queuedCount(): number {
    let n = this.remote.size;
    for (const list of this.waiting.values()) n += list.length;
    return n;
  }

  /**
   * Stop claiming; cancel every started job and release it to the queue (another node, or this one at
   * its next start, runs it again from the start); resolves when they settled, or after stopTimeoutMs
   * (a job that did not settle stays held until its lease runs out, or on SQLite until the next start).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    LIVE_OWNERS.delete(this.owner);
    clearInterval(this.poller);
    clearInterval(this.heart);
    await this.filling;
    await this.beating;
    const settling: Promise<void>[] = [];
    for (const job of this.jobs.values()) {
      if (job.run === null && job.phase === 'queued') continue; // stays queued in the database
      job.stop ??= 'shutdown';
      job.run?.cancel();
      settling.push(job.ended);
    }
    for (const job of [...this.jobs.values()]) if (job.phase === 'queued') this.forget(job);
    if (settling.length === 0) return;
    const outcome = await waitAtMost(Promise.allSettled(settling), this.opts.stopTimeoutMs ?? 30000);
    if (outcome === 'timeout')
      this.opts.log.warn({ jobs: this.running.size }, 'simulation jobs did not stop in time; they are re-queued at the next start');
  }

  // ---- bookkeeping ---------------------------------------------------------------------------------

  private track(row: JobRow): Job {
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const params = JSON.parse(row.params) as Record<string, unknown>;
    const job: Job = {
      row,
      phase: 'queued',
      run: null,
      runBefore: 0,
      sliceStart: 0,
      quantumUsed: false,
      charged: row.charged_periods,
      maxSeconds: maxSecondsOf(params),
      done: 0,
      total: row.steps_total,
      timer: undefined,
      stop: null,
      hold: { owner: this.owner, attempt: row.attempts },
      ended,
      end,
      writes: Promise.resolve(),
      final: false,
    };
    this.jobs.set(row.job_id, job);
    return job;
  }

  /** Into its tenant's waiting list, in submission order. */
  private enqueue(job: Job): void {
    const tenant = job.row.tenant_id;
    let list = this.waiting.get(tenant);
    if (!list) this.waiting.set(tenant, (list = []));
    let i = list.length;
    while (i > 0 && list[i - 1]!.row.seq > job.row.seq) i--;
    list.splice(i, 0, job);
  }

  private unqueue(job: Job): void {
    const tenant = job.row.tenant_id;
    const list = this.waiting.get(tenant);
    if (!list) return;
    const i = list.indexOf(job);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.waiting.delete(tenant);
  }

  /** The job has ended here: out of every structure, its waiters released. */
  private forget(job: Job): void {
    clearTimeout(job.timer);
    job.timer = undefined;
    this.unqueue(job);
    this.running.delete(job);
    this.jobs.delete(job.row.job_id);
    job.end();
  }

  private runningOf(tenant: string, countPausing = true): number {
    let n = 0;
    for (const j of this.running) if (j.row.tenant_id === tenant && (countPausing || j.phase !== 'pausing')) n++;
    return n;
  }

  /** Run time so far, seconds: slices before, plus the current one while the job holds its slot (storing its outputs included). */
  private runTime(job: Job): number {
    return job.runBefore + (holdsSlot(job) ? Math.max(0, this.now() - job.sliceStart) : 0);
  }

  private progressOf(job: Job): Progress {
    return { steps_completed: job.done, steps_total: job.total, elapsed_s: this.runTime(job) };
  }

  /** What a started job held here shows beyond its row: its progress, and queued while paused. */
  private live(row: JobRow): LiveState | undefined {
    const job = this.jobs.get(row.job_id);
    if (!job || job.run === null || (row.status !== 'running' && row.status !== 'queued')) return undefined;
    const status = job.phase === 'paused' ? 'queued' : job.phase === 'ending' ? row.status : 'running';
    return { status, progress: this.progressOf(job) };
  }

  // ---- turns ---------------------------------------------------------------------------------------

  /**
   * The job whose turn is next, a paused one held here or one in the store: the tenant with the fewest
   * jobs running (here and on other nodes), then the oldest last turn here, then the oldest job.
   */
  private pickNext(): Next | undefined {
    let best: { next: Next; running: number; turn: number; seq: number } | undefined;
    for (const tenant of new Set([...this.waiting.keys(), ...this.remote.keys()])) {
      const paused = this.waiting.get(tenant)?.[0];
      const queued = this.remote.get(tenant);
      const next: Next | undefined =
        paused && (!queued || paused.row.seq < queued.row.seq) ? { job: paused } : queued ? { row: queued.row } : undefined;
      if (!next) continue;
      const seq = 'job' in next ? next.job.row.seq : next.row.seq;
      const cand = { next, running: this.runningOf(tenant) + (queued?.runningElsewhere ?? 0), turn: this.lastTurn.get(tenant) ?? 0, seq };
      if (
        !best ||
        cand.running < best.running ||
        (cand.running === best.running && (cand.turn < best.turn || (cand.turn === best.turn && seq < best.seq)))
      ) {
        best = cand;
      }
    }
    return best?.next;
  }

  /** Fill the free slots (one look at the queue at a time; a wake-up meanwhile looks again after it). */
  private pump(): void {
    if (!this.started || this.stopping || this.opts.worker === false) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    this.filling = this.fill()
      .catch((err) => this.opts.log.error({ err }, 'taking simulation jobs from the queue failed'))
      .finally(() => {
        this.pumping = false;
        if (this.pumpAgain) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private async fill(): Promise<void> {
    // A full node looks at the queue only when one of its jobs has run its quantum (a waiting tenant may take its turn).
    const full = () => this.running.size >= this.opts.concurrency;
    if (full() && ![...this.running].some((j) => j.phase === 'running' && j.quantumUsed)) return;
    await this.look();
    // Bounded: a claim lost to another node looks again, a few times at most before the next wake-up.
    for (let tries = 0; tries < this.opts.concurrency + 4 && !this.stopping && !full(); tries++) {
      const next = this.pickNext();
      if (!next) break;
      if ('job' in next) {
        this.take(next.job);
        this.resumeSlice(next.job);
        continue;
      }
      const row = await this.opts.store.claim({ owner: this.owner, now: this.now(), leaseS: this.timings.leaseS }, next.row.job_id);
      if (row && this.stopping) {
        await this.opts.store.requeue(row.job_id, { owner: this.owner, attempt: row.attempts });
        return;
      }
      if (row) {
        const job = this.track(row);
        this.take(job);
        job.phase = 'starting';
        void this.execute(job)
          .catch((err) => this.opts.log.error({ err, job_id: job.row.job_id }, 'simulation job bookkeeping failed'))
          .finally(() => {
            this.forget(job);
            this.pump();
          });
      }
      await this.look();
    }
    this.preempt();
  }

  /** The job gets a slot: its tenant's turn. */
  private take(job: Job): void {
    this.unqueue(job);
    this.running.add(job);
    this.lastTurn.set(job.row.tenant_id, ++this.turns);
  }

  /** Read the queue: per tenant, the oldest job a claim may take. */
  private async look(): Promise<void> {
    const candidates = await this.opts.store.candidates(this.owner, this.now(), CLAIM_CANDIDATES_MAX);
    this.remote = new Map(candidates.map((c) => [c.row.tenant_id, c]));
  }

  /** The heartbeat: renew the leases of the jobs held here (with their progress); a job taken over stops here. */
  private async beat(): Promise<void> {
    const held = [...this.jobs.values()];
    if (held.length === 0) return;
    const renewed = new Set(
      await this.opts.store.renew(
        { owner: this.owner, now: this.now(), leaseS: this.timings.leaseS },
        held.map((j) => ({ jobId: j.row.job_id, ...j.hold, progress: j.phase === 'paused' ? undefined : this.progressOf(j) })),
      ),
    );
    for (const job of held) {
      if (renewed.has(job.row.job_id) || this.jobs.get(job.row.job_id) !== job || job.final) continue;
      this.opts.log.warn({ job_id: job.row.job_id }, 'simulation job was taken over by another node (its lease ran out); this run stops');
      job.stop ??= 'lost';
      job.run?.cancel();
    }
  }

  /** Stop the jobs held here that another node was asked to cancel. */
  private async checkCancels(): Promise<void> {
    for (const req of await this.opts.store.cancelRequests(this.owner)) {
      const job = this.jobs.get(req.jobId);
      if (job && job.stop === null) void this.stopJob(job, cancelledProblem(req.detail));
    }
  }

  /**
   * Time slicing: a running job whose slice has run its quantum pauses when a tenant with fewer jobs
   * running (a pausing job no longer counted) has a job waiting. One pause per such tenant.
   */
  private preempt(): void {
    if (this.stopping) return;
    const counts = new Map<string, number>();
    for (const [tenant, c] of this.remote) counts.set(tenant, c.runningElsewhere);
    for (const j of this.running) if (j.phase !== 'pausing') counts.set(j.row.tenant_id, (counts.get(j.row.tenant_id) ?? 0) + 1);
    let inFlight = [...this.running].filter((j) => j.phase === 'pausing').length;
    const claimants = [...new Set([...this.waiting.keys(), ...this.remote.keys()])]
      .map((tenant) => ({ tenant, running: counts.get(tenant) ?? 0, turn: this.lastTurn.get(tenant) ?? 0 }))
      .sort((a, b) => a.running - b.running || a.turn - b.turn);
    for (const c of claimants) {
      if (inFlight > 0) {
        // A slot already on its way goes to this tenant.
        inFlight--;
        counts.set(c.tenant, (counts.get(c.tenant) ?? 0) + 1);
        continue;
      }
      let victim: Job | undefined;
      for (const j of this.running) {
        if (j.phase !== 'running' || !j.quantumUsed || j.row.tenant_id === c.tenant) continue;
        const theirs = counts.get(j.row.tenant_id) ?? 0;
        if (theirs <= (counts.get(c.tenant) ?? 0)) continue;
        if (
          !victim ||
          theirs > (counts.get(victim.row.tenant_id) ?? 0) ||
          (theirs === counts.get(victim.row.tenant_id) && j.sliceStart < victim.sliceStart)
        )
          victim = j;
      }
      if (!victim) continue;
      this.pauseSlice(victim);
      counts.set(victim.row.tenant_id, (counts.get(victim.row.tenant_id) ?? 1) - 1);
      counts.set(c.tenant, (counts.get(c.tenant) ?? 0) + 1);
    }
  }

  private pauseSlice(job: Job): void {
    job.phase = 'pausing';
    job.run!.pause();
    this.opts.log.info({ job_id: job.row.job_id, tenant_id: job.row.tenant_id }, 'simulation job yields its turn');
  }

  /** The solver stopped after pause(): the job gives its slot back and waits for its next turn. */
  private onPaused(job: Job): void {
    if (job.phase !== 'pausing' || job.stop !== null) return;
    job.runBefore = this.runTime(job);
    job.phase = 'paused';
    clearTimeout(job.timer);
    job.timer = undefined;
    this.running.delete(job);
    this.enqueue(job);
    const progress = this.progressOf(job);
    job.writes = job.writes
      .then(() => this.opts.store.markPaused(job.row.job_id, job.hold, progress))
      .catch((err) => this.opts.log.error({ err, job_id: job.row.job_id }, 'could not record a paused job'));
    this.pump();
  }

  private resumeSlice(job: Job): void {
    job.writes = job.writes
      .then(() => this.opts.store.markResumed(job.row.job_id, job.hold))
      .catch((err) => this.opts.log.error({ err, job_id: job.row.job_id }, 'could not record a resumed job'));
    this.beginSlice(job);
    job.run!.resume();
    this.opts.log.info({ job_id: job.row.job_id, tenant_id: job.row.tenant_id }, 'simulation job resumed');
  }

  private beginSlice(job: Job): void {
    job.phase = 'running';
    job.sliceStart = this.now();
    job.quantumUsed = false;
    this.arm(job);
  }

  // ---- run time: quantum, charges, budget ----------------------------------------------------------

  /** One timer per running job, for the nearest of: its quantum, its next charge, its budget. */
  private arm(job: Job): void {
    clearTimeout(job.timer);
    if (job.final) return;
    const ran = this.runTime(job);
    const period = this.opts.charger?.periodS;
    const toCharge = period ? job.charged * period - ran : Infinity;
    const toBudget = job.maxSeconds - ran;
    const toQuantum = job.quantumUsed ? Infinity : job.sliceStart + this.quantumS - this.now();
    const wait = Math.max(0, Math.min(toCharge, toBudget, toQuantum));
    job.timer = setTimeout(() => this.tick(job), Math.ceil(wait * 1000) + 1);
  }

  private tick(job: Job): void {
    job.timer = undefined;
    if (!holdsSlot(job) || job.final) return;
    const ran = this.runTime(job);
    if (ran >= job.maxSeconds) {
      void this.stopJob(
        job,
        new ProblemError(422, 'time_limit', `the job ran for its budget of ${job.maxSeconds} s (params.max_seconds) and was stopped`, {
          max_seconds: job.maxSeconds,
        }),
      );
      return;
    }
    const period = this.opts.charger?.periodS;
    // A run a shutdown releases, or one taken over, is thrown away: the run that takes the job pays from there.
    const discarded = this.stopping || job.stop === 'shutdown' || job.stop === 'lost';
    if (period && ran >= job.charged * period && !discarded) void this.chargePeriod(job);
    if (!job.quantumUsed && this.now() >= job.sliceStart + this.quantumS) {
      job.quantumUsed = true;
      this.pump(); // looks at the queue, then preempts for a tenant waiting there
    }
    if (holdsSlot(job)) this.arm(job);
  }

  /** Charge the next period of run time; without room the job stops (quota_exceeded). False then. */
  private async chargePeriod(job: Job): Promise<boolean> {
    const charger = this.opts.charger;
    if (!charger) return true;
    const periods = ++job.charged;
    const paying = charger.charge(job.row.tenant_id);
    // Recorded among the job's writes, which its end (a release by a shutdown included) waits for.
    job.writes = job.writes
      .then(() =>
        paying.then(
          () => this.opts.store.markCharged(job.row.job_id, job.hold, periods),
          () => undefined, // refused: nothing paid (handled below)
        ),
      )
      .catch((err) => this.opts.log.error({ err, job_id: job.row.job_id }, 'could not record the run time a job paid for'));
    try {
      await paying;
      return true;
    } catch (err) {
      const problem =
        err instanceof ProblemError
          ? err
          : new ProblemError(500, 'internal_error', 'the run time of the job could not be metered; see the server log');
      if (!(err instanceof ProblemError)) this.opts.log.error({ err, job_id: job.row.job_id }, "metering a job's run time failed");
      void this.stopJob(job, problem);
      return false;
    }
  }

  /**
   * Stop a job for `reason`: a job that never started fails now; a started one is cancelled (a
   * paused one woken) and fails when its solver stops. Resolves when it has ended.
   */
  private stopJob(job: Job, reason: ProblemError): Promise<void> {
    if (job.stop === null) job.stop = reason;
    if (job.phase === 'queued') {
      this.unqueue(job);
      job.phase = 'ending';
      const problem = job.stop instanceof ProblemError ? job.stop : reason;
      void this.opts.store
        .markFailed(
          job.row.job_id,
          {
            finishedAt: this.now(),
            progress: progressOf(job.row),
            error: problem.body(),
          },
          job.hold,
        )
        .catch((err) => this.opts.log.error({ err, job_id: job.row.job_id }, 'could not record a cancelled job'))
        .finally(() => {
          this.opts.log.info({ job_id: job.row.job_id, code: problem.code }, 'simulation job failed before it started');
          this.forget(job);
        });
    } else {
      job.run?.cancel();
    }
    return job.ended;
  }

  // ---- one job from its first turn to its end -----------------------------------------------------

  private async execute(job: Job): Promise<void> {
    const { row } = job;
    const { store, log } = this.opts;
    // Claimed: the row is running, held by this run.
    if (this.stopping || job.stop === 'shutdown') {
      await store.requeue(row.job_id, job.hold);
      return;
    }
    log.info({ job_id: row.job_id, tenant_id: row.tenant_id, solver: row.solver }, 'simulation job started');
    const params = JSON.parse(row.params) as Record<string, unknown>;
    let writeError: unknown = null;
    const outputs = new JobOutputs(
      this.opts.outputs,
      {
        jobId: row.job_id,
        tenantId: row.tenant_id,
        solver: row.solver,
        namespace: row.namespace,
        prefix: row.output_key_prefix,
        params,
      },
      () => this.stopping || job.stop !== null,
      (err) => {
        writeError = err;
        job.run?.cancel();
      },
    );
    try {
      if (this.opts.tenantActive && !this.opts.tenantActive(row.tenant_id)) {
        throw cancelledProblem(`tenant ${row.tenant_id} was deactivated before the job ran`);
      }
      if (!this.opts.runner.solvers().includes(row.solver)) throw solverUnavailable(row.solver, this.opts.runner.solvers());
      // The first period of run time is paid before the solver starts (a failed charge stops the job),
      // unless an earlier run of the job paid for it (it was released by a shutdown, or its node died).
      if (job.stop === null && job.charged === 0) await this.chargePeriod(job);
      const stop = stopOf(job); // read again: it may have been set while the charge was written
      if (stop === 'shutdown' || stop === 'lost') throw new ShuttingDown();
      if (stop !== null) throw stop;
      job.run = this.opts.runner.simulate(row.solver, solverParamsOf(params), {
        onProgress: (done, total) => {
          job.done = done;
          job.total = total;
        },
        onSnapshot: (step, t, fields) => outputs.snapshot(step, t, fields),
        onPaused: () => this.onPaused(job),
      });
      this.beginSlice(job);
      let result;
      try {
        result = await job.run.result;
      } catch (err) {
        // A cancel we asked for because a snapshot could not be stored: that error is the cause.
        throw errorCode(err) === ENGINE_CANCELLED && writeError !== null ? writeError : err;
      }
      this.endSlice(job);
      if (this.stopping) throw new ShuttingDown();
      const stats = result.stats ?? {};
      const finalStep = finiteOr(stats.steps, job.done);
      await outputs.final(result.fields, finalStep, finiteOr(stats.t, null));
      if (this.stopping) throw new ShuttingDown();
      const finishedAt = this.now();
      const progress = this.closeRunTime(job);
      await this.settleCharges(job, progress.elapsed_s);
      const keys = outputs.keys;
      await job.writes;
      await outputs.commit((tx) => store.markCompleted(tx, row.job_id, job.hold, { finishedAt, progress, outputs: keys, stats }));
      log.info({ job_id: row.job_id, outputs: keys.length, run_s: progress.elapsed_s }, 'simulation job completed');
    } catch (err) {
      this.endSlice(job);
      await job.writes;
      const cancelled = errorCode(err) === ENGINE_CANCELLED || err instanceof OutputsAborted;
      const stop = stopOf(job);
      if (stop === 'lost' || err instanceof LeaseLost) {
        // Another run holds the job now: this one commits nothing (its end is the other run's).
        await outputs.discard();
        log.warn({ job_id: row.job_id, attempt: job.hold.attempt }, 'simulation job run stopped: another node took the job over');
        return;
      }
      if (stop === 'shutdown' || (stop === null && this.stopping && (err instanceof ShuttingDown || cancelled))) {
        await outputs.discard();
        await store.requeue(row.job_id, job.hold);
        log.info({ job_id: row.job_id }, 'simulation job cancelled by shutdown; back in the queue');
        return;
      }
      const stopped = stop instanceof ProblemError && (cancelled || err === stop);
      const problem = stopped ? stop.body() : this.problemOf(err, row);
      const progress = this.closeRunTime(job);
      await this.settleCharges(job, progress.elapsed_s);
      const failed = { finishedAt: this.now(), progress, error: problem };
      let kept: string[] = [];
      try {
        if (stopped) {
          // Stopped by the tenant, its budget or its quota: the snapshots it stored are kept.
          try {
            kept = await outputs.keep(async (tx, keys) => {
              await store.markFailed(row.job_id, { ...failed, outputs: keys }, job.hold, tx);
            });
          } catch (keepErr) {
            if (keepErr instanceof LeaseLost) throw keepErr;
            log.warn({ err: keepErr, job_id: row.job_id }, 'the snapshots of a stopped job could not be kept');
            await outputs.discard();
            await store.markFailed(row.job_id, failed, job.hold);
          }
        } else {
          await outputs.discard();
          await store.markFailed(row.job_id, failed, job.hold);
        }
      } catch (endErr) {
        if (!(endErr instanceof LeaseLost)) throw endErr;
        await outputs.discard();
        log.warn(
          { job_id: row.job_id, attempt: job.hold.attempt },
          'simulation job run ended after another node took the job over; its end is not written',
        );
        return;
      }
      log.warn({ job_id: row.job_id, code: problem.code, detail: problem.detail, kept: kept.length }, 'simulation job failed');
    }
  }

  /**
   * The solver is done (or gone, a paused one woken by a cancel): the job stores its outputs or its
   * failure, its run time still counting (a paused one's from now).
   */
  private endSlice(job: Job): void {
    if (job.phase === 'ending') return;
    const from = job.phase;
    this.unqueue(job);
    job.phase = 'ending';
    if (from === 'running' || from === 'pausing') return;
    job.sliceStart = this.now();
    // A job that never started (refused before its solver ran) has no run time to meter.
    if (from === 'paused') this.arm(job);
  }

  /** The job's progress with its run time made final: from here on no timer meters or stops it. */
  private closeRunTime(job: Job): Progress {
    const progress = this.progressOf(job);
    job.final = true;
    clearTimeout(job.timer);
    job.timer = undefined;
    return progress;
  }

  /**
   * At a started job's end, before its end is written: the periods its final run time started that
   * no timer charged (one that fired late), so the bill is one charge per started period of `elapsed`.
   */
  private async settleCharges(job: Job, elapsed: number): Promise<void> {
    const charger = this.opts.charger;
    if (!charger || job.run === null) return;
    while (job.charged * charger.periodS <= elapsed) {
      job.charged++;
      try {
        await charger.charge(job.row.tenant_id);
      } catch (err) {
        this.opts.log.warn({ err, job_id: job.row.job_id }, 'the last run time of an ended job could not be charged');
        return;
      }
    }
  }

  /** The problem object a failed job shows: the engine's words for its own errors, nothing internal otherwise. */
  private problemOf(err: unknown, row: JobRow): Record<string, unknown> {
    if (err instanceof ProblemError) return err.body();
    const code = errorCode(err);
    const message = err instanceof Error ? err.message : String(err);
    if (code === ENGINE_INVALID) return new ProblemError(400, 'invalid_request', message).body();
    if (code !== undefined && code.startsWith('ERR_TTS_')) {
      return new ProblemError(500, 'internal_error', `the ${row.solver} solver failed: ${message}`).body();
    }
    this.opts.log.error({ err, job_id: row.job_id }, 'simulation job failed unexpectedly');
    return new ProblemError(
      500,
      'internal_error',
      `the job failed unexpectedly; the server log has the details under job_id ${row.job_id}`,
    ).body();
  }
}

/** The owners of this process's schedulers not stopped (several share a process in tests): never taken for dead. */
const LIVE_OWNERS = new Set<string>();

/** Whose turn is next: a paused job held here, or a queued job of the store (to claim). */
type Next = { job: Job } | { row: JobRow };

/** Thrown inside a run when the scheduler is stopping (the job goes back to the queue). */
class ShuttingDown extends Error {}

/** Running, pausing (still running) or ending (storing what it produced): the job holds a slot and its run time counts. */
function holdsSlot(job: Job): boolean {
  return job.phase === 'running' || job.phase === 'pausing' || job.phase === 'ending';
}

/** A job's stop reason as it is now (a read the compiler does not narrow from an earlier one). */
function stopOf(job: Job): Job['stop'] {
  return job.stop;
}

function progressOf(row: JobRow): Progress {
  return { steps_completed: row.steps_completed, steps_total: row.steps_total, elapsed_s: row.elapsed_s };
}

function finiteOr<T>(v: unknown, fallback: T): number | T {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** `p`, or 'timeout' after `ms` (the timer never outlives the wait). */
async function waitAtMost<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
