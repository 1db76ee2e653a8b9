// Gauges read at scrape time from the services that own the numbers: the decoded-core cache, the job
// queue, engine admission and the bytes held for requests in flight, and the bytes on disk. Nothing here is updated on the request path.
import { stat } from 'node:fs/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { CoreCacheStats } from '../query/core-cache.js';
import type { EngineAdmissionStats } from '../admission/engine-admission.js';
import type { ByteBudgetStats } from '../admission/byte-budget.js';
import type { BlobStore } from '../store/blobs.js';

export interface ServiceGaugeSources {
  coreCache(): CoreCacheStats;
  jobs(): { queued: number; running: number };
  engineAdmission(): EngineAdmissionStats;
  inflightBytes(): ByteBudgetStats;
  /** The SQLite database file (its -wal and -shm siblings are counted with it). */
  dbFile: string;
  /** The blob store (its usage() walks or lists every blob; bytesRead counts payload bytes read). */
  blobs: Pick<BlobStore, 'usage' | 'bytesRead'>;
  /** Constant labels of ttstore_build_info. */
  build: { version: string; backend: string };
  /** How long a blob-store walk is reused; a walk stats or lists every blob. Default 30 s. */
  blobWalkTtlMs?: number;
}

async function fileBytes(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

export function registerServiceGauges(registry: Registry, src: ServiceGaugeSources): void {
  const ttl = src.blobWalkTtlMs ?? 30_000;
  let walked: { at: number; result: Promise<{ bytes: number; files: number }> } | null = null;
  const blobs = () => {
    // One walk at a time, reused for `ttl`: scrapes every few seconds never stat the store each time.
    if (!walked || Date.now() - walked.at > ttl) walked = { at: Date.now(), result: src.blobs.usage() };
    return walked.result;
  };

  new Gauge({
    name: 'ttstore_build_info',
    help: 'Always 1; the labels say which version and engine backend run.',
    labelNames: ['version', 'backend'] as const,
    registers: [registry],
  }).set(src.build, 1);
  new Gauge({
    name: 'ttstore_core_cache_bytes',
    help: 'Bytes of decoded operands held by the query core cache (native memory).',
    registers: [registry],
    collect() {
      this.set(src.coreCache().bytes);
    },
  });
  new Gauge({
    name: 'ttstore_core_cache_budget_bytes',
    help: 'Byte budget of the core cache (SVC_GATE_CORE_CACHE_BYTES).',
    registers: [registry],
    collect() {
      this.set(src.coreCache().budgetBytes);
    },
  });
  new Gauge({
    name: 'ttstore_core_cache_entries',
    help: 'Operands held by the core cache.',
    registers: [registry],
    collect() {
      this.set(src.coreCache().entries);
    },
  });
  // The cache keeps its own monotone counts; these counters mirror them at each scrape.
  new Counter({
    name: 'ttstore_core_cache_hits_total',
    help: 'Core cache lookups that found the operand held.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.coreCache().hits);
    },
  });
  new Counter({
    name: 'ttstore_core_cache_misses_total',
    help: 'Core cache lookups that loaded the operand from its blob.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.coreCache().misses);
    },
  });
  new Gauge({
    name: 'ttstore_core_cache_hit_ratio',
    help: 'Hits over lookups since start (0 before the first lookup).',
    registers: [registry],
    collect() {
      const { hits, misses } = src.coreCache();
      this.set(hits + misses > 0 ? hits / (hits + misses) : 0);
    },
  });
  new Counter({
    name: 'ttstore_blob_read_bytes_total',
    help: 'Payload bytes read from blob files (a part of a passthrough entry reads only its rows).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(src.blobs.bytesRead);
    },
  });
  new Gauge({
    name: 'ttstore_jobs_queued',
    help: 'Simulation jobs waiting: the paused ones this node holds, plus one per tenant with jobs in the shared queue at its last look.',
    registers: [registry],
    collect() {
      this.set(src.jobs().queued);
    },
  });
  new Gauge({
    name: 'ttstore_jobs_running',
    help: 'Simulation jobs running now.',
    registers: [registry],
    collect() {
      this.set(src.jobs().running);
    },
  });
  new Gauge({
    name: 'ttstore_engine_slots_running',
    help: 'Engine calls (compress, reconstruct) running in their slots now.',
    registers: [registry],
    collect() {
      this.set(src.engineAdmission().running);
    },
  });
  new Gauge({
    name: 'ttstore_engine_slots_waiting',
    help: "Engine calls waiting for their tenant's turn at a slot.",
    registers: [registry],
    collect() {
      this.set(src.engineAdmission().waiting);
    },
  });
  new Gauge({
    name: 'ttstore_engine_requests_in_flight',
    help: 'Engine requests (put, serve, similarity, top-K) in flight, all tenants.',
    registers: [registry],
    collect() {
      this.set(src.engineAdmission().inFlight);
    },
  });
  new Gauge({
    name: 'ttstore_inflight_bytes',
    help: 'Bytes held for requests in flight (bodies, dense results, streamed answers).',
    registers: [registry],
    collect() {
      this.set(src.inflightBytes().held);
    },
  });
  new Gauge({
    name: 'ttstore_inflight_bytes_limit',
    help: 'Limit of the bytes held for requests in flight (SVC_GATE_MAX_INFLIGHT_BYTES).',
    registers: [registry],
    collect() {
      this.set(src.inflightBytes().limit);
    },
  });
  new Gauge({
    name: 'ttstore_inflight_bytes_waiting',
    help: 'Requests waiting for bytes to come back before they allocate.',
    registers: [registry],
    collect() {
      this.set(src.inflightBytes().waiting);
    },
  });
  // Admission keeps its own monotone counts; this counter mirrors them at each scrape.
  new Counter({
    name: 'ttstore_admission_refused_total',
    help: 'Requests refused by admission: too_many_in_flight (429) or overloaded (503, the byte budget).',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ reason: 'too_many_in_flight' }, src.engineAdmission().refused);
      this.inc({ reason: 'overloaded' }, src.inflightBytes().refused);
    },
  });
  new Gauge({
    name: 'ttstore_sqlite_bytes',
    help: 'Size of the SQLite database with its write-ahead log.',
    registers: [registry],
    async collect() {
      const sizes = await Promise.all(['', '-wal', '-shm'].map((s) => fileBytes(src.dbFile + s)));
      this.set(sizes.reduce((a, b) => a + b, 0));
    },
  });
  new Gauge({
    name: 'ttstore_blob_store_bytes',
    help: 'Size of the blob files (cores and raw payloads); refreshed at most every 30 s.',
    registers: [registry],
    async collect() {
      this.set((await blobs()).bytes);
    },
  });
  new Gauge({
    name: 'ttstore_blob_store_files',
    help: 'Number of blob files; refreshed with ttstore_blob_store_bytes.',
    registers: [registry],
    async collect() {
      this.set((await blobs()).files);
    },
  });
}
