// The schema on PostgreSQL: the same tables and columns as on SQLite (src/store/sqlite/migrations/),
// versioned per component the same way. Keys sort in byte order (COLLATE "C"), as list and the key
// rank of a top-K require. A write is one transaction here, so no table of staged rows is needed.
import type { Migration } from '../migration.js';
import { CHARGED_PERIODS_SQL, QUEUED_INDEX_SQL, RELEASE_UNLEASED_SQL, STORED_BYTES_SQL } from '../sql.js';

export const PG_MIGRATIONS: Migration[] = [
  {
    component: 'entries',
    version: 1,
    sql: `
      CREATE TABLE entries (
        id                 BIGSERIAL PRIMARY KEY,
        tenant_id          TEXT NOT NULL,
        namespace          TEXT NOT NULL,
        key                TEXT COLLATE "C" NOT NULL,
        version            INTEGER NOT NULL,
        kind               TEXT NOT NULL,
        dtype              TEXT NOT NULL,
        shape              TEXT NOT NULL,
        layout             TEXT NOT NULL,
        modes              TEXT NOT NULL,
        ranks              TEXT NOT NULL,
        core_dtype         TEXT,
        verdict            TEXT NOT NULL,
        compressed         INTEGER NOT NULL,
        original_bytes     BIGINT NOT NULL,
        stored_core_bytes  BIGINT NOT NULL,
        frobenius_error    DOUBLE PRECISION NOT NULL,
        max_abs_error      DOUBLE PRECISION NOT NULL,
        relative_error     DOUBLE PRECISION NOT NULL,
        tolerance          DOUBLE PRECISION NOT NULL,
        max_rank_request   INTEGER,
        domain             TEXT NOT NULL,
        source             TEXT NOT NULL,
        passthrough_reason TEXT,
        metadata           TEXT NOT NULL,
        norm               DOUBLE PRECISION,
        created_at         DOUBLE PRECISION NOT NULL,
        blob_id            TEXT NOT NULL,
        blob_kind          TEXT NOT NULL,
        checksum           TEXT NOT NULL,
        deleted_at         DOUBLE PRECISION,
        UNIQUE (tenant_id, namespace, key, version)
      );
      CREATE INDEX entries_tombstones ON entries (deleted_at) WHERE deleted_at IS NOT NULL;
      CREATE INDEX entries_tenant ON entries (tenant_id);

      -- The version counter of a key (never reused, also across deletes and purges), its live version,
      -- and what the last delete hid. A write increments last_version with an UPSERT, which locks the
      -- row until it commits: concurrent writers of a key, on any node, take 1, 2, 3, ... in turn.
      CREATE TABLE entry_keys (
        tenant_id      TEXT NOT NULL,
        namespace      TEXT NOT NULL,
        key            TEXT COLLATE "C" NOT NULL,
        last_version   INTEGER NOT NULL,
        live_id        BIGINT REFERENCES entries (id) ON DELETE SET NULL,
        hidden_through INTEGER NOT NULL DEFAULT 0,
        hidden_at      DOUBLE PRECISION,
        PRIMARY KEY (tenant_id, namespace, key)
      );
      CREATE INDEX entry_keys_live ON entry_keys (live_id) WHERE live_id IS NOT NULL;
      CREATE INDEX entry_keys_stamping ON entry_keys (hidden_at) WHERE hidden_at IS NOT NULL;

      CREATE TABLE entry_metadata (
        entry_id   BIGINT NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
        tenant_id  TEXT NOT NULL,
        namespace  TEXT NOT NULL,
        key        TEXT COLLATE "C" NOT NULL,
        version    INTEGER NOT NULL,
        name       TEXT NOT NULL,
        value_json TEXT NOT NULL,
        PRIMARY KEY (entry_id, name)
      );
      CREATE INDEX entry_metadata_lookup ON entry_metadata (tenant_id, namespace, name, value_json);
    `,
  },
  {
    component: 'entries',
    version: 2,
    // Bytes held for writes in progress on any node (EntryStore.holdStorage); expires_at in unix ms.
    sql: `
      CREATE TABLE storage_holds (
        id         BIGSERIAL PRIMARY KEY,
        tenant_id  TEXT NOT NULL,
        bytes      BIGINT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
      );
      CREATE INDEX storage_holds_tenant ON storage_holds (tenant_id);
    `,
  },
  {
    component: 'entries',
    version: 3,
    // Each tenant's stored bytes, kept in the transaction of every insert and purge of its entries,
    // so that a storage hold reads one row instead of summing the tenant's entries; filled here for
    // the entries that exist.
    sql: `
      CREATE TABLE entry_storage (
        tenant_id TEXT PRIMARY KEY,
        bytes     BIGINT NOT NULL
      );
      INSERT INTO entry_storage (tenant_id, bytes)
        SELECT tenant_id, SUM(${STORED_BYTES_SQL}) FROM entries GROUP BY tenant_id;
    `,
  },
  {
    component: 'gate',
    version: 1,
    sql: `
      CREATE TABLE gate_tenants (
        tenant_id           TEXT PRIMARY KEY,
        plan                TEXT NOT NULL CHECK (plan IN ('starter', 'builder', 'pro', 'enterprise')),
        namespaces          TEXT NOT NULL DEFAULT '["default"]',
        email               TEXT,
        active              INTEGER NOT NULL DEFAULT 1,
        key_hash            TEXT NOT NULL UNIQUE,
        rate_limit_requests INTEGER,
        rate_limit_window_s INTEGER,
        monthly_quota       DOUBLE PRECISION,
        storage_quota_bytes BIGINT,
        created_at          DOUBLE PRECISION NOT NULL,
        key_rotated_at      DOUBLE PRECISION,
        deactivated_at      DOUBLE PRECISION,
        purge_after         DOUBLE PRECISION,
        purged_at           DOUBLE PRECISION
      );
      CREATE TABLE gate_usage (
        tenant_id TEXT NOT NULL,
        period    TEXT NOT NULL,
        bucket    TEXT NOT NULL,
        cu_milli  BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, period, bucket)
      );
    `,
  },
  {
    component: 'gate',
    version: 2,
    // CU held for requests in progress on any node (UsageStore.hold); expires_at in unix ms.
    sql: `
      CREATE TABLE gate_quota_holds (
        id         BIGSERIAL PRIMARY KEY,
        tenant_id  TEXT NOT NULL,
        period     TEXT NOT NULL,
        milli      BIGINT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
      );
      CREATE INDEX gate_quota_holds_tenant ON gate_quota_holds (tenant_id, period);
    `,
  },
  {
    component: 'gate',
    version: 3,
    // A hold decided in one round trip (UsageStore.hold): the tenant's lock is held only while the server
    // runs these statements, never across a client's round trips. Each statement of a PL/pgSQL function
    // takes a fresh snapshot under READ COMMITTED, so the sums see every hold committed before the lock.
    // A block is granted while usage and holds leave another block free, else the request's own amount
    // while it fits, else nothing. p_lock names the tenant's lock as the callers always have, so nodes
    // before and after this migration exclude each other. Holds a charge emptied go with the expired.
    sql: `
      CREATE FUNCTION ttstore_quota_hold(p_lock TEXT, p_tenant TEXT, p_period TEXT, p_milli BIGINT, p_block BIGINT,
                                         p_expires DOUBLE PRECISION, p_quota BIGINT, p_now DOUBLE PRECISION)
      RETURNS TABLE (hold_id BIGINT, held_milli BIGINT)
      LANGUAGE plpgsql AS $$
      DECLARE
        taken BIGINT;
        grant_milli BIGINT;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtextextended(p_lock, 0));
        DELETE FROM gate_quota_holds q
         WHERE q.tenant_id = p_tenant AND q.period = p_period AND (q.expires_at <= p_now OR q.milli <= 0);
        taken := (SELECT COALESCE(SUM(u.cu_milli), 0) FROM gate_usage u WHERE u.tenant_id = p_tenant AND u.period = p_period)
               + (SELECT COALESCE(SUM(q.milli), 0) FROM gate_quota_holds q WHERE q.tenant_id = p_tenant AND q.period = p_period);
        IF p_block > p_milli AND taken + 2 * p_block <= p_quota THEN
          grant_milli := p_block;
        ELSIF taken + p_milli <= p_quota THEN
          grant_milli := p_milli;
        ELSE
          RETURN;
        END IF;
        INSERT INTO gate_quota_holds (tenant_id, period, milli, expires_at)
        VALUES (p_tenant, p_period, grant_milli, p_expires)
        RETURNING id INTO hold_id;
        held_milli := grant_milli;
        RETURN NEXT;
      END
      $$;
    `,
  },
  {
    component: 'jobs',
    version: 1,
    sql: `
      CREATE TABLE sim_jobs (
        seq               BIGSERIAL PRIMARY KEY,
        job_id            TEXT NOT NULL UNIQUE,
        tenant_id         TEXT NOT NULL,
        solver            TEXT NOT NULL,
        namespace         TEXT NOT NULL,
        output_key_prefix TEXT NOT NULL,
        params            TEXT NOT NULL,
        status            TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        steps_completed   INTEGER NOT NULL DEFAULT 0,
        steps_total       INTEGER NOT NULL DEFAULT 0,
        elapsed_s         DOUBLE PRECISION NOT NULL DEFAULT 0,
        attempts          INTEGER NOT NULL DEFAULT 0,
        created_at        DOUBLE PRECISION NOT NULL,
        started_at        DOUBLE PRECISION,
        finished_at       DOUBLE PRECISION,
        outputs           TEXT,
        stats             TEXT,
        error             TEXT,
        lease_owner       TEXT,
        lease_expires_at  DOUBLE PRECISION
      );
      CREATE INDEX sim_jobs_tenant ON sim_jobs (tenant_id, seq);
      CREATE INDEX sim_jobs_pending ON sim_jobs (seq) WHERE status IN ('queued', 'running');
    `,
  },
  {
    component: 'jobs',
    version: 2,
    // As SQLite's jobs version 3: a cancel asked on one node for a job another node runs.
    sql: `ALTER TABLE sim_jobs ADD COLUMN cancel_requested TEXT; ${RELEASE_UNLEASED_SQL};`,
  },
  {
    component: 'jobs',
    version: 3,
    sql: CHARGED_PERIODS_SQL,
  },
  {
    component: 'jobs',
    version: 4,
    sql: QUEUED_INDEX_SQL,
  },
];
