// Schema of the storage component. Entries are addressed by (tenant, namespace, key, version); the
// per-key row keeps the version counter (so a number is never reused, also across deletes and purges)
// and the live version, which makes list a walk over one index.
import type { Migration } from '../db.js';

export const ENTRY_MIGRATIONS: Migration[] = [
  {
    component: 'entries',
    version: 1,
    sql: `
      CREATE TABLE entries (
        id                INTEGER PRIMARY KEY,
        tenant_id         TEXT NOT NULL,
        namespace         TEXT NOT NULL,
        key               TEXT NOT NULL,
        version           INTEGER NOT NULL,
        kind              TEXT NOT NULL,              -- array | blob
        dtype             TEXT NOT NULL,
        shape             TEXT NOT NULL,              -- JSON list
        layout            TEXT NOT NULL,              -- row_major | interleaved
        modes             TEXT NOT NULL,              -- JSON list (empty when passthrough)
        ranks             TEXT NOT NULL,              -- JSON list r_0..r_d (empty when passthrough)
        core_dtype        TEXT,                       -- float32 | float64 | NULL (passthrough)
        verdict           TEXT NOT NULL,
        compressed        INTEGER NOT NULL,
        original_bytes    INTEGER NOT NULL,
        stored_core_bytes INTEGER NOT NULL,
        frobenius_error   REAL NOT NULL,
        max_abs_error     REAL NOT NULL,
        relative_error    REAL NOT NULL,
        tolerance         REAL NOT NULL,
        max_rank_request  INTEGER,
        domain            TEXT NOT NULL,
        source            TEXT NOT NULL,              -- put | put_cores
        passthrough_reason TEXT,
        metadata          TEXT NOT NULL,              -- JSON object
        norm              REAL,                       -- ||what serve returns||_2 (NULL when not finite)
        created_at        REAL NOT NULL,
        blob_id           TEXT NOT NULL,
        blob_kind         TEXT NOT NULL,              -- raw | cores
        checksum          TEXT NOT NULL,              -- hex SHA-256 of the blob payload
        deleted_at        REAL,
        UNIQUE (tenant_id, namespace, key, version)
      );
      CREATE INDEX entries_tombstones ON entries (deleted_at) WHERE deleted_at IS NOT NULL;
      CREATE INDEX entries_tenant ON entries (tenant_id);

      CREATE TABLE entry_keys (
        tenant_id    TEXT NOT NULL,
        namespace    TEXT NOT NULL,
        key          TEXT NOT NULL,
        last_version INTEGER NOT NULL,
        live_id      INTEGER REFERENCES entries (id) ON DELETE SET NULL,
        PRIMARY KEY (tenant_id, namespace, key)
      ) WITHOUT ROWID;

      -- Top-level metadata values (canonical JSON) of every entry, for metadata search and filters.
      CREATE TABLE entry_metadata (
        entry_id   INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        tenant_id  TEXT NOT NULL,
        namespace  TEXT NOT NULL,
        key        TEXT NOT NULL,
        version    INTEGER NOT NULL,
        name       TEXT NOT NULL,
        value_json TEXT NOT NULL,
        PRIMARY KEY (entry_id, name)
      ) WITHOUT ROWID;
      CREATE INDEX entry_metadata_lookup ON entry_metadata (tenant_id, namespace, name, value_json);
    `,
  },
  {
    component: 'entries',
    version: 2,
    // Writes bounded per transaction (CONTRACT.md section 8). A put_cores_batch (or a job's outputs)
    // larger than one transaction's budget is written in pieces whose rows stay invisible until one
    // small final step makes them all visible; the ids listed in entry_staged are written but not yet
    // visible (a crash leaves them for start() to remove).
    sql: `
      CREATE TABLE entry_staged (
        id INTEGER PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE
      );
      -- Removing an entry row looks up the key rows pointing at it (entry_keys.live_id, a foreign key
      -- that is set to NULL): without this index every removed row scanned all keys, and compaction
      -- of 100 rows among 100,000 keys held the writer for about 2 s.
      CREATE INDEX entry_keys_live ON entry_keys (live_id) WHERE live_id IS NOT NULL;
      -- A delete hides every version up to hidden_through at once, in the key row alone; the rows'
      -- deleted_at (compaction's clock) are stamped after it in bounded transactions, and hidden_at
      -- (the delete's time) stays set until they all are.
      ALTER TABLE entry_keys ADD COLUMN hidden_through INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entry_keys ADD COLUMN hidden_at REAL;
      CREATE INDEX entry_keys_stamping ON entry_keys (hidden_at) WHERE hidden_at IS NOT NULL;
      -- Keys deleted before (their rows all stamped): a delete hid every version there was, so the
      -- newest deleted one bounds them.
      UPDATE entry_keys SET hidden_through = (
        SELECT MAX(e.version) FROM entries e
        WHERE e.tenant_id = entry_keys.tenant_id AND e.namespace = entry_keys.namespace AND e.key = entry_keys.key
          AND e.deleted_at IS NOT NULL)
      WHERE EXISTS (SELECT 1 FROM entries e WHERE e.tenant_id = entry_keys.tenant_id AND e.namespace = entry_keys.namespace
          AND e.key = entry_keys.key AND e.deleted_at IS NOT NULL);
    `,
  },
  {
    component: 'entries',
    version: 3,
    // Bytes held for writes in progress on any node (EntryStore.holdStorage); expires_at in unix ms.
    sql: `
      CREATE TABLE storage_holds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant_id TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        expires_at REAL NOT NULL
      );
      CREATE INDEX storage_holds_tenant ON storage_holds (tenant_id);
    `,
  },
];
