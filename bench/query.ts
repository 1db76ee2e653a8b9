// npm run bench:query — the query path at scale, against baselines measured in the same run:
//   1. 10,000 stored entries of 2^16 float32 elements (each a sum of 1 to 4 sinusoids of random
//      frequency, phase and amplitude: smooth, QTT ranks 2 to 8), top-10 by cosine through the
//      engine (one batched contraction over the cached cores, then the bounded heap) against a dense
//      brute force over the same reconstructed arrays held in memory (numpy, one BLAS
//      matrix-vector product); bar: the engine >= 10x faster, excluding HTTP, with the same top-10;
//   2. HTTP top-K p50 over that namespace (the first, cold request apart);
//   3. metadata search over 100,000 entries matching 1% of them (bar: p50 <= 50 ms);
//   4. memory held by the core cache.
// BENCH_QUERY_ENTRIES and BENCH_QUERY_SEARCH_ENTRIES shrink the run for a quick look (no bars then).
import { spawnSync } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { engine } from '../src/engine/index.js';
import { blasKernelsFor, cpuFlags } from '../src/engine/load.js';
import { Database } from '../src/store/sqlite/db.js';
import { SqliteEntryStore } from '../src/store/sqlite/entries.js';
import { FileBlobStore } from '../src/store/blobs.js';
import { EntryService } from '../src/entries/service.js';
import { ENTRY_MIGRATIONS } from '../src/store/sqlite/migrations/entries.js';
import { resolveTarget } from '../src/entries/oracle.js';
import { limiter } from '../src/entries/limiter.js';
import { listCandidates, storageRefs } from '../src/store/sqlite/candidates.js';
import type { CandidateRow } from '../src/store/entries.js';
import { CoreCache, type CacheRow } from '../src/query/core-cache.js';
import { QueryService } from '../src/query/service.js';
import { topKIndices } from '../src/query/topk.js';
import { http, startServer, type TestServer } from '../test/helpers/server.js';
import { createTenant } from '../test/helpers/tenants.js';
import { sinusoids } from './fields.js';
import { testEntryService } from '../test/helpers/entries.js';

const N = 1 << 16;
const ENTRIES = Number(process.env.BENCH_QUERY_ENTRIES ?? 10000);
const SEARCH_ENTRIES = Number(process.env.BENCH_QUERY_SEARCH_ENTRIES ?? 100000);
const FULL = ENTRIES === 10000 && SEARCH_ENTRIES === 100000;
const K = 10;
const REPS = 9;
const PYTHON = '/usr/bin/python3'; // Debian's numpy; the python3 on PATH has none
const DENSE_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../bench/query_dense.py');
const ENV = { SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: '10000000' };

const keyOf = (j: number) => `f${String(j).padStart(5, '0')}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface DenseRun {
  times_ms: number[];
  top: number[];
  scores: number[];
  blas: string;
  numpy: string;
}

// The environment of a baseline run: OPENBLAS_CORETYPE = coretype, or unset for '' (OpenBLAS's own
// choice; the engine's loader has set it in this process).
function withCoretype(coretype: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  return coretype ? { ...env, OPENBLAS_CORETYPE: coretype } : env;
}

// '' (OpenBLAS's own choice), then the kernel sets this CPU's flags allow (those the engine's loader
// would choose from, up to its choice).
function openblasCoretypes(): string[] {
  const best = blasKernelsFor(cpuFlags());
  return ['', ...(best ? ['Haswell'] : []), ...(best === 'SkylakeX' ? ['SkylakeX'] : [])];
}
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

async function openEntries(dir: string): Promise<{ db: Database; entries: EntryService }> {
  const db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
  const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
  const entries = testEntryService(db, blobs);
  return { db, entries };
}

function rssBytes(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, 'utf8').then((s) => Number(/VmRSS:\s+(\d+) kB/.exec(s)?.[1] ?? NaN) * 1024);
}

function cacheRows(tenantId: string, namespace: string, rows: Array<Omit<CacheRow, 'tenantId' | 'namespace'>>): CacheRow[] {
  return rows.map((c) => ({ ...c, tenantId, namespace }));
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-bench-query-'));
  const denseFile = path.join(dir, 'dense.f32');
  let server: TestServer | null = null;
  try {
    // A tenant made the ordinary way, then the data written in process (no HTTP: 2.6 GB of arrays).
    server = await startServer({ dataDir: dir, env: ENV });
    const tenant = await createTenant(server, { namespaces: ['fields', 'search'] });
    await server.stop();
    server = null;

    let t0 = process.hrtime.bigint();
    const { db, entries } = await openEntries(dir);
    const ranks = new Map<number, number>();
    const verdicts = new Map<string, number>();
    const run = limiter(2);
    await Promise.all(
      Array.from({ length: ENTRIES }, (_, j) =>
        run(async () => {
          const { data, terms } = sinusoids(j, N);
          const row = await entries.put({
            tenantId: tenant.tenant_id,
            namespace: 'fields',
            key: keyOf(j),
            metadata: { terms },
            payload: { kind: 'array', dtype: 'float32', shape: [N], data: Buffer.from(data.buffer) },
            target: resolveTarget(undefined, undefined, undefined),
          });
          const r = Math.max(...(JSON.parse(row.ranks) as number[]), 0);
          ranks.set(r, (ranks.get(r) ?? 0) + 1);
          verdicts.set(row.verdict, (verdicts.get(row.verdict) ?? 0) + 1);
        }),
      ),
    );
    const putS = ms(t0) / 1e3;

    // The reconstructed arrays (what serve dense returns), one after another, for the dense baseline.
    t0 = process.hrtime.bigint();
    const fh = await open(denseFile, 'w');
    for (let j = 0; j < ENTRIES; j++) {
      const row = await entries.require(tenant.tenant_id, 'fields', keyOf(j));
      await fh.write(await entries.readDense(row));
    }
    await fh.close();
    const denseS = ms(t0) / 1e3;

    t0 = process.hrtime.bigint();
    const runSearch = limiter(64);
    await Promise.all(
      Array.from({ length: SEARCH_ENTRIES }, (_, i) =>
        runSearch(() =>
          entries.put({
            tenantId: tenant.tenant_id,
            namespace: 'search',
            key: `doc-${String(i).padStart(6, '0')}`,
            metadata: { bucket: i % 100, i, kind: i % 2 === 0 ? 'even' : 'odd' },
            payload: { kind: 'blob', dtype: 'uint8', shape: [8], data: Buffer.from(`doc${String(i % 100000).padStart(5, '0')}`) },
            target: resolveTarget(undefined, undefined, undefined),
          }),
        ),
      ),
    );
    const searchPutS = ms(t0) / 1e3;
    entries.stop();
    await db.close();

    // ---- 1. the engine against the dense baseline (same reconstructed arrays), no HTTP -----------
    const e = await openEntries(dir);
    const q = await e.entries.require(tenant.tenant_id, 'fields', keyOf(0));
    const candidates = await listCandidates(e.db, tenant.tenant_id, 'fields', q, q.key, {});
    const pool = engine.createOperandPool();
    const cache = new CoreCache(pool, e.entries, 1 << 30);
    t0 = process.hrtime.bigint();
    const release = await cache.acquireIds([q.id, ...candidates.map((c) => c.id)], async (missing) =>
      cacheRows(tenant.tenant_id, 'fields', await storageRefs(e.db, tenant.tenant_id, missing)),
    );
    const coldLoadMs = ms(t0);
    const scoreOnce = async (rows: CandidateRow[]) => {
      const start = process.hrtime.bigint();
      const ids = new Float64Array(rows.length);
      const norms = new Float64Array(rows.length);
      for (let j = 0; j < rows.length; j++) {
        ids[j] = rows[j]!.id;
        norms[j] = rows[j]!.norm;
      }
      const scores = await pool.score(q.id, q.norm!, ids, norms, 'cosine');
      const best = topKIndices(scores, K, false);
      return { ms: ms(start), keys: best.map((i) => rows[i]!.key), scores: best.map((i) => scores[i]!) };
    };
    await scoreOnce(candidates);
    const engineRuns: number[] = [];
    let engineTop = await scoreOnce(candidates);
    for (let r = 0; r < REPS; r++) {
      engineTop = await scoreOnce(candidates);
      engineRuns.push(engineTop.ms);
    }
    // The same, on the rank-8 candidates alone, scaled to the full count: the worst case of this data.
    const maxRankOf = new Map<number, number>();
    for (const row of await e.db.all<{ id: number; ranks: string }>(
      `SELECT id, ranks FROM entries WHERE tenant_id = ? AND namespace = 'fields'`,
      [tenant.tenant_id],
    )) {
      maxRankOf.set(row.id, Math.max(...(JSON.parse(row.ranks) as number[]), 0));
    }
    const only8 = candidates.filter((c) => maxRankOf.get(c.id) === 8);
    const rank8Runs: number[] = [];
    if (only8.length > 0) for (let r = 0; r < REPS; r++) rank8Runs.push((await scoreOnce(only8)).ms);
    const cacheStats = cache.stats();
    const poolStats = pool.stats();
    release();

    // The whole service call in process (candidate listing included).
    const service = new QueryService({ entries: e.entries, search: new SqliteEntryStore(e.db), engine, coreCacheBytes: 1 << 30 });
    // The service's first call loads the cores into its own cache and lists the candidates; after a
    // change of the namespace (simulated by invalidating its lists) a call lists them again from
    // SQLite; later calls reuse both.
    let s1 = process.hrtime.bigint();
    await service.topk(tenant.tenant_id, 'fields', q.key, K, 'cosine', {});
    const serviceFirst = ms(s1);
    service.candidates.invalidate({ tenantId: tenant.tenant_id, namespace: 'fields' });
    s1 = process.hrtime.bigint();
    await service.topk(tenant.tenant_id, 'fields', q.key, K, 'cosine', {});
    const serviceListing = ms(s1);
    const serviceRuns: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const s0 = process.hrtime.bigint();
      await service.topk(tenant.tenant_id, 'fields', q.key, K, 'cosine', {});
      serviceRuns.push(ms(s0));
    }
    e.entries.stop();
    await e.db.close();

    // The baseline at its best: OpenBLAS picks its kernels from the CPU model and falls back to old
    // SSE3 ones (Prescott) on models it does not know, as on some VMs, so the baseline also runs with
    // each kernel set the CPU can execute, and the fastest counts.
    let dense: DenseRun | null = null;
    for (const coretype of openblasCoretypes()) {
      const py = spawnSync(PYTHON, [DENSE_SCRIPT, denseFile, String(ENTRIES), String(N), '0', String(K), String(REPS)], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
        env: withCoretype(coretype),
      });
      if (py.status !== 0) throw new Error(`dense baseline failed (${PYTHON}): ${py.stderr}`);
      const run = JSON.parse(py.stdout.trim().split('\n').pop()!) as DenseRun;
      console.log(`  dense baseline with ${run.blas}: median ${median(run.times_ms).toFixed(2)} ms`);
      if (!dense || median(run.times_ms) < median(dense.times_ms)) dense = run;
    }
    if (!dense) throw new Error('no dense baseline ran');
    const denseTop = dense.top.map(keyOf);
    await rm(denseFile, { force: true });

    // ---- 2-4. over HTTP, against the real server on the same data ----------------------------------
    server = await startServer({ dataDir: dir, env: ENV });
    const auth = { 'X-Api-Key': tenant.api_key };
    const rssBefore = await rssBytes(server.proc.pid!);
    let h0 = process.hrtime.bigint();
    const first = await http(server.url, 'POST', '/v1/query/topk', {
      json: { query_key: keyOf(0), namespace: 'fields', k: K },
      headers: auth,
    });
    const coldHttp = ms(h0);
    if (first.status !== 200) throw new Error(`topk: ${first.status} ${first.text}`);
    const rssAfter = await rssBytes(server.proc.pid!);
    const httpRuns: number[] = [];
    for (let r = 0; r < 20; r++) {
      h0 = process.hrtime.bigint();
      const res = await http(server.url, 'POST', '/v1/query/topk', {
        json: { query_key: keyOf(r % 50), namespace: 'fields', k: K },
        headers: auth,
      });
      if (res.status !== 200) throw new Error(`topk: ${res.status}`);
      httpRuns.push(ms(h0));
    }
    const httpTop = (first.body.results as Array<[string, number]>).map((p) => p[0]);
    const searchRuns: number[] = [];
    let searchCount = 0;
    for (let r = 0; r < 21; r++) {
      h0 = process.hrtime.bigint();
      const res = await http(server.url, 'POST', '/v1/query/search', {
        json: { namespace: 'search', filters: { bucket: r % 100 } },
        headers: auth,
      });
      if (res.status !== 200) throw new Error(`search: ${res.status} ${res.text}`);
      if (r > 0) searchRuns.push(ms(h0));
      searchCount = res.body.count as number;
    }

    // ---- report ------------------------------------------------------------------------------------
    const eng = median(engineRuns);
    const base = median(dense.times_ms);
    const ratio = base / eng;
    const sameTop = JSON.stringify(engineTop.keys) === JSON.stringify(denseTop);
    const sameHttp = JSON.stringify(httpTop) === JSON.stringify(engineTop.keys);
    const searchP50 = median(searchRuns);
    const info = engine.info();
    const row = (name: string, value: string, baseline: string, bar: string, ok: boolean | null) =>
      `  ${name.padEnd(44)} ${value.padStart(14)}   ${baseline.padEnd(40)} ${bar.padEnd(22)} ${ok === null || !FULL ? '' : ok ? 'PASS' : 'FAIL'}`;
    const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    const histogram = [...ranks.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ');
    const lines = [
      `query bench: ${ENTRIES} entries of ${N} float32 (2^16), ${SEARCH_ENTRIES} small entries for search; engine ${info.backend} (${info.blas}, ${info.threads} threads)`,
      `  data: max rank per entry {${histogram}}; verdicts ${JSON.stringify(Object.fromEntries(verdicts))}; written in ${putS.toFixed(0)} s (+ ${denseS.toFixed(0)} s reconstructing for the baseline, ${searchPutS.toFixed(0)} s for the search entries)`,
      `  dense baseline: numpy ${dense.numpy} (BLAS ${dense.blas}) over a ${ENTRIES} x ${N} float32 matrix (${mb(ENTRIES * N * 4)}) in memory`,
      '',
      `  ${'measure'.padEnd(44)} ${'value'.padStart(14)}   ${'baseline (same run)'.padEnd(40)} ${'bar'.padEnd(22)}`,
      row(
        `engine top-${K} cosine, ${candidates.length} candidates`,
        `${eng.toFixed(2)} ms`,
        `dense ${base.toFixed(2)} ms: ${ratio.toFixed(1)}x faster`,
        '>= 10x faster',
        ratio >= 10,
      ),
      row(
        `  same top-${K} keys as the dense baseline`,
        sameTop ? 'yes' : 'NO',
        sameTop ? '' : `engine ${engineTop.keys.join(',')} dense ${denseTop.join(',')}`,
        'same keys',
        sameTop,
      ),
      row(
        `  rank-8 candidates only (${only8.length}), per 10k`,
        only8.length ? `${((median(rank8Runs) * candidates.length) / only8.length).toFixed(2)} ms` : '-',
        only8.length ? `${(base / ((median(rank8Runs) * candidates.length) / only8.length)).toFixed(1)}x faster than dense` : '',
        '-',
        null,
      ),
      row('  cold: load 10k cores from blob files', `${coldLoadMs.toFixed(0)} ms`, '', '-', null),
      row(
        'service topk in process (candidates listed)',
        `${median(serviceRuns).toFixed(2)} ms`,
        `${(base / median(serviceRuns)).toFixed(1)}x faster than dense`,
        '-',
        null,
      ),
      row(
        '  listed again after a write (SQLite)',
        `${serviceListing.toFixed(2)} ms`,
        `first call (cold cores) ${serviceFirst.toFixed(0)} ms`,
        '-',
        null,
      ),
      row(
        `HTTP topk p50 (k ${K}, ${candidates.length} candidates)`,
        `${median(httpRuns).toFixed(2)} ms`,
        `first (cold cache) ${coldHttp.toFixed(0)} ms`,
        '-',
        null,
      ),
      row(`  HTTP top-${K} equals the engine's`, sameHttp ? 'yes' : 'NO', '', '-', null),
      row(
        `HTTP search p50 (${searchCount} of ${SEARCH_ENTRIES} match)`,
        `${searchP50.toFixed(2)} ms`,
        `max ${Math.max(...searchRuns).toFixed(2)} ms`,
        '<= 50 ms',
        searchP50 <= 50,
      ),
      row(
        'core cache: operands held',
        mb(cacheStats.bytes),
        `${poolStats.entries} operands (${(cacheStats.bytes / Math.max(1, poolStats.entries)).toFixed(0)} B each)`,
        `budget ${mb(cacheStats.budgetBytes)}`,
        null,
      ),
      row('  server RSS growth from the first topk', mb(rssAfter - rssBefore), `dense arrays would be ${mb(ENTRIES * N * 4)}`, '-', null),
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    if (server) await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
