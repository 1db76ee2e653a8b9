// SQL expressions both engines share (standard SQL over the same columns), written once.
import { DTYPES, ITEM_SIZE } from '../engine/types.js';

/** The bytes an entry stores, over a row of `entries` (the same rule as entries/storage-quota.ts storedBytesOf). */
export const STORED_BYTES_SQL = "(CASE WHEN blob_kind = 'cores' THEN stored_core_bytes ELSE original_bytes END)";

/** CandidateRow.bytes of the entry `e`: its cores as stored, or its values as float64. */
export const OPERAND_BYTES_SQL =
  `CASE WHEN e.blob_kind = 'cores' THEN e.stored_core_bytes ELSE e.original_bytes * CASE e.dtype ` +
  `${DTYPES.map((d) => `WHEN '${d}' THEN ${8 / ITEM_SIZE[d]}`).join(' ')} ELSE 8 END END`;

/** Placeholders of a claim's values, in each engine's parameter syntax. */
export interface ClaimParams {
  owner: string;
  until: string;
  now: string;
}

/**
 * A job JobStore.claim may take: queued and not held (a paused job stays held by its node), or
 * running under a lease that ran out. A running job without a lease is a single node's run (markRunning).
 */
export const claimableJobSql = (p: ClaimParams): string =>
  `status IN ('queued', 'running') AND ((status = 'queued' AND (lease_expires_at IS NULL OR lease_expires_at < ${p.now}))
   OR (status = 'running' AND lease_expires_at < ${p.now}))`;

/** What a claim sets: held by the owner until then, running from the start (a run's state lived in its node's memory). */
export const claimSetSql = (p: ClaimParams): string =>
  `status = 'running', lease_owner = ${p.owner}, lease_expires_at = ${p.until}, attempts = attempts + 1,
   started_at = ${p.now}, steps_completed = 0, elapsed_s = 0`;

/**
 * An SQL condition that holds when the entry whose id is `idColumn` matches every (name, canonical
 * value) pair: one primary-key probe of entry_metadata (entry_id, name) per filter. `param` binds a
 * value and returns its placeholder, in the order the placeholders appear.
 */
export function metadataMatchSql(pairs: Array<[string, string]>, idColumn: string, param: (value: string) => string): string {
  const sql = pairs
    .map(
      ([name, value]) =>
        `EXISTS (SELECT 1 FROM entry_metadata m WHERE m.entry_id = ${idColumn} AND m.name = ${param(name)} AND m.value_json = ${param(value)})`,
    )
    .join(' AND ');
  return sql || '1 = 1';
}
