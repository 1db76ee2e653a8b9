// Every repository of the service, as the composition root (src/server.ts) wires them: one
// implementation opens them all over its engine (src/store/sqlite/ for the embedded default).
import type { EntrySearch, EntryStore } from './entries.js';
import type { JobStore } from './jobs.js';
import type { TenantStore } from './tenants.js';
import type { UsageStore } from './usage.js';

/**
 * How long a quota hold in a shared store (UsageStore.hold, EntryStore.holdStorage) outlives its
 * request at most: a node that died mid-request frees its holds then. Longer than any request runs.
 */
export const QUOTA_HOLD_TTL_MS = 15 * 60_000;

/** Where a store reports what it could not do and will retry or leave for the next start. */
export interface StoreLogger {
  error(obj: object, msg: string): void;
}

export interface Stores {
  entries: EntryStore & EntrySearch;
  tenants: TenantStore;
  usage: UsageStore;
  jobs: JobStore;
  /** Resolves when the metadata store answers (health). */
  ping(): Promise<void>;
  /** Wait for queued writes, then close. */
  close(): Promise<void>;
}
