// The job scheduler without HTTP: a temporary database with the real entry service and a solver
// runner the test drives by hand (fake-runner.ts), shared by the scheduler's test files.
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Database } from '../../src/store/sqlite/db.js';
import { FileBlobStore } from '../../src/store/blobs.js';
import { EntryService } from '../../src/entries/service.js';
import { ENTRY_MIGRATIONS } from '../../src/store/sqlite/migrations/entries.js';
import { JOB_MIGRATIONS } from '../../src/store/sqlite/migrations/jobs.js';
import { SqliteJobStore as JobStore } from '../../src/store/sqlite/jobs.js';
import { JobScheduler, type JobCharger, type JobSchedulerOptions } from '../../src/jobs/scheduler.js';
import type { OutputStore } from '../../src/jobs/outputs.js';
import { FakeRunner } from './fake-runner.js';
import { testEntryService } from '../helpers/entries.js';

export const silent = { info() {}, warn() {}, error() {} };

export interface SchedulerRig {
  db: Database;
  entries: EntryService;
  store: JobStore;
  runner: FakeRunner;
  scheduler: JobScheduler;
  close(): Promise<void>;
}

export type RigOptions = Partial<Omit<JobSchedulerOptions, 'store' | 'runner' | 'log'>> & {
  /** Wraps the entry service as the scheduler's output store (to make it fail on purpose). */
  outputsOf?: (entries: EntryService) => OutputStore;
};

/** A started scheduler on `dir` (concurrency 1 unless given); close() stops it and the stores. */
export async function openScheduler(dir: string, opts: RigOptions = {}): Promise<SchedulerRig> {
  const db = await Database.open(path.join(dir, 'ttstore.db'), [...ENTRY_MIGRATIONS, ...JOB_MIGRATIONS]);
  const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
  const entries = testEntryService(db, blobs);
  await entries.start();
  const store = new JobStore(db);
  const runner = new FakeRunner();
  const { outputsOf, ...rest } = opts;
  const scheduler = new JobScheduler({
    store,
    runner,
    concurrency: 1,
    log: silent,
    stopTimeoutMs: 5000,
    ...rest,
    outputs: outputsOf ? outputsOf(entries) : entries,
  });
  await scheduler.start();
  return {
    db,
    entries,
    store,
    runner,
    scheduler,
    async close() {
      await scheduler.stop();
      entries.stop();
      await db.close();
    },
  };
}

/** A charger of `periodS` periods that records the tenant of each period charged, in `charges`. */
export function recordingCharger(periodS: number): JobCharger & { charges: string[] } {
  const charges: string[] = [];
  return {
    periodS,
    charges,
    async charge(tenantId) {
      charges.push(tenantId);
    },
  };
}

/** Poll `fn` until it gives a truthy value; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10000,
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** How many .blob files the blob store under `dir` holds. */
export async function countBlobs(dir: string): Promise<number> {
  let n = 0;
  for (const sub of await readdir(dir).catch(() => [] as string[])) {
    n += (await readdir(path.join(dir, sub)).catch(() => [] as string[])).filter((f) => f.endsWith('.blob')).length;
  }
  return n;
}
