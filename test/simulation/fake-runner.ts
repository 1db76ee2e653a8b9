// A SimRunner the test drives by hand: each simulate() call becomes a FakeRun whose progress,
// snapshots and ending the test decides. cancel() settles the run with ERR_TTS_CANCELLED, as the
// engine does, on a later tick; pause() is acknowledged (onPaused) on a later tick, as at the
// engine's next poll, unless the test holds polls back (`polls = false`); resume() lets it go on.
import type { SimField, SimHooks, SimOutput, SimParams, SimRun, SimRunner } from '../../src/jobs/runner.js';

export class FakeRun {
  cancelled = false;
  /** Between onPaused and resume(). */
  paused = false;
  pauses = 0;
  resumes = 0;
  /** False: the run does not reach a poll (a long step), so a pause is not acknowledged yet. */
  polls = true;
  private pauseAsked = false;
  readonly result: Promise<SimOutput>;
  private resolve!: (o: SimOutput) => void;
  private reject!: (e: unknown) => void;
  private settled = false;

  constructor(
    readonly solver: string,
    readonly params: SimParams,
    readonly hooks: SimHooks,
  ) {
    this.result = new Promise<SimOutput>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  progress(done: number, total: number): void {
    this.hooks.onProgress?.(done, total);
  }

  snapshot(step: number, t: number, fields: SimField[]): void {
    this.hooks.onSnapshot?.(step, t, fields);
  }

  finish(out: SimOutput): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(out);
  }

  fail(code: string | undefined, message: string): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(Object.assign(new Error(message), code ? { code } : {}));
  }

  /** The run reaches a poll: a pause asked for takes effect. */
  poll(): void {
    if (!this.pauseAsked || this.paused || this.settled || this.cancelled) return;
    this.paused = true;
    this.pauses++;
    this.hooks.onPaused?.();
  }

  get ended(): boolean {
    return this.settled;
  }

  handle(): SimRun {
    return {
      result: this.result,
      cancel: () => {
        this.cancelled = true;
        setImmediate(() => this.fail('ERR_TTS_CANCELLED', 'cancelled'));
      },
      pause: () => {
        this.pauseAsked = true;
        if (this.polls) setImmediate(() => this.poll());
      },
      resume: () => {
        this.pauseAsked = false;
        if (this.paused) this.resumes++;
        this.paused = false;
      },
    };
  }
}

export class FakeRunner implements SimRunner {
  readonly runs: FakeRun[] = [];
  running = 0;
  maxRunning = 0;

  constructor(private readonly offered: string[] = ['poisson_2d', 'euler_2d']) {}

  solvers(): string[] {
    return this.offered;
  }

  /** The engine's param checks; tests that need a refusal set `refuse`. */
  refuse: ((solver: string, params: SimParams) => string | null) | null = null;

  checkSimulation(solver: string, params: SimParams): void {
    const why = this.refuse?.(solver, params);
    if (why) throw Object.assign(new RangeError(why), { code: 'ERR_TTS_INVALID' });
  }

  simulate(solver: string, params: SimParams, hooks: SimHooks = {}): SimRun {
    const run = new FakeRun(solver, params, hooks);
    this.runs.push(run);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const done = () => {
      this.running--;
    };
    run.result.then(done, done);
    return run.handle();
  }

  /** Wait until `n` runs were started (polls the event loop). */
  async started(n: number, timeoutMs = 5000): Promise<void> {
    const t0 = Date.now();
    while (this.runs.length < n) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`only ${this.runs.length} of ${n} runs started`);
      await new Promise((r) => setTimeout(r, 2));
    }
  }
}

/** A smooth float64 field of shape [n, n] (compresses well). */
export function smoothField(name: string, n: number, phase = 0): SimField {
  const data = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) data[i * n + j] = Math.sin((Math.PI * (i + 1)) / (n + 1) + phase) * Math.sin((Math.PI * (j + 1)) / (n + 1));
  return { name, shape: [n, n], data };
}
