// The storage boundary of entries: the versions of (tenant, namespace, key), their metadata index,
// and the reads the query feature makes over them. EntryService and QueryService depend on these
// interfaces only; src/store/sqlite/entries.ts implements them over SQLite.
import type { DType, LayoutName } from '../engine/types.js';
import type { Filters } from './filters.js';
import type { Transaction } from './transaction.js';

/** The Oracle's verdict on an entry (CONTRACT.md section 6), stored with it. */
export type Verdict = 'exact' | 'safe' | 'weak' | 'passthrough';

/** An entry as stored: one row of `entries`. */
export interface EntryRow {
  id: number;
  tenant_id: string;
  namespace: string;
  key: string;
  version: number;
  kind: 'array' | 'blob';
  dtype: DType;
  shape: string;
  layout: LayoutName;
  modes: string;
  ranks: string;
  core_dtype: 'float32' | 'float64' | null;
  verdict: Verdict;
  compressed: number;
  original_bytes: number;
  stored_core_bytes: number;
  frobenius_error: number;
  max_abs_error: number;
  relative_error: number;
  tolerance: number;
  max_rank_request: number | null;
  domain: string;
  source: 'put' | 'put_cores';
  passthrough_reason: string | null;
  metadata: string;
  norm: number | null;
  created_at: number;
  blob_id: string;
  blob_kind: 'raw' | 'cores';
  checksum: string;
  deleted_at: number | null;
}

/** A version as list shows it. */
export interface ListRow {
  key: string;
  version: number;
  created_at: number;
  verdict: Verdict;
  compressed: number;
  original_bytes: number;
  stored_core_bytes: number;
}

/** An entry's columns as a write produces them; the store adds its identity, version and times. */
export type NewEntryRow = Omit<EntryRow, 'id' | 'version' | 'created_at' | 'deleted_at' | 'tenant_id' | 'namespace' | 'key'>;

export interface NewEntry {
  key: string;
  row: NewEntryRow;
  /** Its metadata as an object (row.metadata holds the same as JSON text), for the metadata index. */
  metadata: Record<string, unknown>;
}

/** Which entries a purge removes: rows of writes a stop interrupted, tombstones past a time, a tenant's all. */
export type PurgeScope = { staged: true } | { deletedBefore: number } | { tenantId: string };

/** A purged entry: the blob it named and the bytes it stored. */
export interface PurgedEntry {
  id: number;
  blob_id: string;
  tenant_id: string;
  bytes: number;
}

/** The versions a delete hid. */
export interface Hidden {
  versions: number;
  removedIds: number[];
}

/** One key, or every key (the stamping a crash interrupted). */
export type KeyScope = { tenantId: string; namespace: string; key: string } | 'all';

/** Bytes held in the store for a write in progress (as QuotaHold holds CU); lapses at `expiresAt` (unix ms). */
export interface StorageHold {
  tenantId: string;
  bytes: number;
  quotaBytes: number;
  expiresAt: number;
}

export interface EntryStore {
  /** Whether several nodes write this store: then writes hold their bytes here too (holdStorage). */
  readonly shared: boolean;
  /** Every tenant's stored bytes (storedBytesOf summed over its rows, hidden ones included). */
  storedBytesByTenant(): Promise<Array<{ tenantId: string; bytes: number }>>;
  /** One tenant's stored bytes, as storedBytesByTenant sums them. */
  storedBytesOfTenant(tenantId: string): Promise<number>;
  /**
   * Atomically: when the tenant's stored bytes plus its unexpired holds plus `h.bytes` stay within
   * `h.quotaBytes`, record the hold and return its id; else null. `now` (unix ms) expires holds.
   */
  holdStorage(h: StorageHold, now: number): Promise<string | null>;
  /** Drop a hold (its write committed or failed); one already gone is no error. */
  unholdStorage(id: string): Promise<void>;
  /** The blob ids every row names (the start-up sweep keeps these). */
  blobIds(): Promise<Set<string>>;
  /**
   * Insert entries with the next version of each key, all visible at once (or none), with `also` run
   * in the transaction that makes them visible; `now` stamps created_at.
   */
  insert(
    tenantId: string,
    namespace: string,
    items: NewEntry[],
    now: () => number,
    also?: (tx: Transaction) => Promise<void>,
  ): Promise<EntryRow[]>;
  /** Hide every visible version of a key at `at`; null when the key has no live version. */
  hide(tenantId: string, namespace: string, key: string, at: number): Promise<Hidden | null>;
  /** Stamp deleted_at on the rows the deletes of `scope` hid, where that is unfinished. */
  stampDeleted(scope: KeyScope): Promise<void>;
  /** The live entry (latest, or the given version); undefined when absent or deleted. */
  find(tenantId: string, namespace: string, key: string, version?: number): Promise<EntryRow | undefined>;
  /** Latest live versions of keys with `prefix`, in byte order, and how many keys match in all. */
  list(tenantId: string, namespace: string, prefix: string, limit: number, offset: number): Promise<{ rows: ListRow[]; total: number }>;
  /** Remove up to `limit` entries of `scope` (rows and metadata; not their blobs) and return them. */
  purge(scope: PurgeScope, limit: number): Promise<PurgedEntry[]>;
  /** Remove a tenant's key rows (version counters), after its entries are purged. */
  removeKeys(tenantId: string): Promise<void>;
}

/**
 * Entries are comparable when their shapes are equal (the column holds canonical JSON), whatever their
 * layouts and mode sizes (CONTRACT.md section 3): a top-K brings its query into each candidate layout
 * present, and a row_major train put with its own split is compared in the engine's (CoreCache).
 */
export interface Comparable {
  shape: string;
}

/**
 * A candidate: what scoring needs. Where its operand lives is read only when the operand is not in
 * the core cache (storageRefs): a top-K over a warm namespace reads three columns per candidate.
 */
export interface CandidateRow {
  id: number;
  key: string;
  /** ||entry||_2 kept at write time; never null here (non-finite entries are not candidates). */
  norm: number;
  /** What its operand holds in the core cache, about: the cores as stored, or the values as float64. */
  bytes: number;
  /** The layout its operand is held in (an uncompressed entry's: row_major). */
  layout: LayoutName;
}

/** The columns reading an entry's stored data needs. */
export type StoredRef = Pick<EntryRow, 'blob_id' | 'blob_kind' | 'checksum' | 'original_bytes' | 'shape' | 'layout' | 'dtype'>;

/** Where an entry's operand lives: its blob and how to read it. */
export interface StorageRef extends StoredRef {
  id: number;
  key: string;
  dtype: DType;
  /** The stored mode sizes (canonical JSON). */
  modes: string;
}

export interface SearchRow {
  key: string;
  version: number;
  metadata: string;
}

/** What the query feature reads: candidates of a top-K, where operands live, metadata search. */
export interface EntrySearch {
  /**
   * Latest live entries of (tenant, namespace) comparable with `like`, holding finite values, other
   * than `excludeKey`, matching `filters`; in ascending key (byte) order, so an index is a key rank.
   */
  candidates(tenantId: string, namespace: string, like: Comparable, excludeKey: string | null, filters: Filters): Promise<CandidateRow[]>;
  /** The storage refs of entries by id (any state: a candidate deleted meanwhile still has its blob). */
  storageRefs(tenantId: string, ids: number[]): Promise<StorageRef[]>;
  /**
   * One page (`limit` from `offset`) of the latest live entries whose metadata matches every filter,
   * in ascending key (byte) order, and how many match in all.
   */
  searchMetadata(
    tenantId: string,
    namespace: string,
    filters: Filters,
    limit: number,
    offset: number,
  ): Promise<{ rows: SearchRow[]; total: number }>;
}
