// SQL expressions both engines share (standard SQL over the same columns), written once.
import { DTYPES, ITEM_SIZE } from '../engine/types.js';

/** The bytes an entry stores, over a row of `entries` (the same rule as entries/storage-quota.ts storedBytesOf). */
export const STORED_BYTES_SQL = "(CASE WHEN blob_kind = 'cores' THEN stored_core_bytes ELSE original_bytes END)";

/** CandidateRow.bytes of the entry `e`: its cores as stored, or its values as float64. */
export const OPERAND_BYTES_SQL =
  `CASE WHEN e.blob_kind = 'cores' THEN e.stored_core_bytes ELSE e.original_bytes * CASE e.dtype ` +
  `${DTYPES.map((d) => `WHEN '${d}' THEN ${8 / ITEM_SIZE[d]}`).join(' ')} ELSE 8 END END`;
