// Composition root: opens the stores, builds the services, wires the routes, listens.
// Each component is added here in one place; nothing else knows how the whole is assembled.
import { mkdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import Router from '@koa/router';
import { createApp, lingerThenDestroy } from './http/app.js';
import { ConfigError, type Config } from './config.js';
import { badRequest, PROBLEM_CONTENT_TYPE, ProblemError } from './http/errors.js';
import { MAX_HEADER_BYTES, sizeText } from './limits/input.js';
import type { Logger } from './runtime/log.js';
import { openSqliteStores } from './store/sqlite/index.js';
import { engine as nativeEngine, setThreads } from './engine/index.js';
import { Api } from './http/endpoint.js';
import { createMetrics } from './metrics/registry.js';
import { instrumentEngine } from './metrics/engine.js';
import { registerServiceGauges } from './metrics/service-gauges.js';
import { registerHealthRoutes } from './routes/health/routes.js';
import { registerMetricsRoute } from './routes/metrics/routes.js';
import { registerReferenceRoutes } from './routes/reference/routes.js';
import { registerConsoleRoutes } from './routes/console/routes.js';
// storage (entries): blob store, service, routes
import { EntryService, type EntryChange } from './entries/service.js';
import { openBlobStore } from './store/open-blobs.js';
import { VERSION } from './runtime/version.js';
import { BufferPool } from './runtime/buffer-pool.js';
// gate: tenants, keys, rate limits, metering; admin routes
import { createGate } from './gate/index.js';
import { effectiveStorageQuota } from './gate/plans.js';
import { TenantPurger } from './gate/purge.js';
import { registerAdminRoutes } from './routes/admin/routes.js';
import { registerAccountRoutes } from './routes/account/routes.js';
import { registerStorageRoutes } from './routes/storage/routes.js';
import { bodyReader } from './http/body.js';
import { releaseGpuCoresOnRemoval } from './routes/storage/read.js';
// simulation: scheduler (solvers run on the engine's threads), routes
import { JobScheduler, type JobCharger } from './jobs/scheduler.js';
import { JOBS_TOPIC } from './jobs/lease.js';
import { SIMULATION_RUN_SECONDS } from './gate/operations.js';
import { effectiveQuota } from './gate/plans.js';
import { registerSimulationRoutes } from './routes/simulation/routes.js';
// query: similarity, top-K, metadata search on the stored cores
import { registerQueryRoutes } from './routes/query/routes.js';
// admission: engine work in fair turns, engine requests in flight per tenant, bytes held for requests
import { EngineAdmission, ENGINE_SLOTS } from './admission/engine-admission.js';
import { ByteBudget } from './admission/byte-budget.js';
import { RouteAdmission } from './http/admission.js';

/** The engine backend SVC_GATE_ENGINE_BACKEND asks for; 'cuda' without a usable device stops start-up. */
function selectBackend(config: Config): void {
  try {
    nativeEngine.selectBackend?.(config.engineBackend);
  } catch (err) {
    throw new ConfigError(`SVC_GATE_ENGINE_BACKEND=${config.engineBackend}: ${(err as Error).message}`);
  }
  nativeEngine.gpu?.setBudget(config.gpuCacheBytes);
}

/** `fn` run at most once at a time; calls while it runs share one more run after it. */
function coalesced(fn: () => Promise<unknown>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const p = fn().then(() => undefined);
    running = p;
    p.finally(() => {
      if (running === p) running = null;
    }).catch(() => undefined);
    return p;
  };
  return () => {
    if (!running) return start();
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return start();
      });
    return queued;
  };
}

export interface RunningServer {
  port: number;
  url: string;
  /** The routes served (tests compare them with the OpenAPI document). */
  router: Router;
  /** Stop accepting, let in-flight requests finish (bounded by the grace period), close the stores. */
  close(): Promise<void>;
}

/** The raw HTTP/1.1 answer to a request the parser refused: a problem+json body, then the connection closes. */
function rawProblem(status: number, reason: string, problem: ProblemError): string {
  const body = JSON.stringify(problem.body());
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (header lines over MAX_HEADER_BYTES,
 * malformed requests) are answered as problems too, as Node would answer them otherwise: only when
 * no answer of an earlier request on the connection is under way, and the connection then closes
 * (lingering, as after any answer that leaves bytes unread).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  let answer: string;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    answer = rawProblem(
      431,
      'Request Header Fields Too Large',
      new ProblemError(
        431,
        'request_header_fields_too_large',
        `the request's header lines are over ${sizeText(MAX_HEADER_BYTES)} together`,
      ),
    );
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    answer = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
  } else {
    answer = rawProblem(400, 'Bad Request', badRequest('malformed HTTP request'));
  }
  socket.end(answer);
  lingerThenDestroy(socket);
}

export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const startedAt = Date.now();
  // Created private (an existing directory keeps its mode); the files in it are made 0600 by their stores.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  selectBackend(config);
  const metrics = createMetrics();
  // Every engine call below is timed and sized for /gate/metrics (and logged at debug).
  const engine = instrumentEngine(nativeEngine, metrics.engine, log);
  if (config.engineThreads > 0) setThreads(config.engineThreads);

  // Every repository (entries, tenants, usage, jobs) over PostgreSQL when SVC_GATE_DATABASE_URL is set,
  // else over one SQLite file in the data dir; either schema is migrated on open.
  const dbFile = path.join(config.dataDir, 'ttstore.db');
  // The clients of PostgreSQL, Redis and S3 load only when their variable is set: one node loads none.
  const stores = config.databaseUrl
    ? await (await import('./store/postgres/index.js')).openPgStores(config.databaseUrl, log)
    : await openSqliteStores(dbFile, log);

  // cluster (SVC_GATE_REDIS_URL): rate limits shared by every node, and a bus on which each node announces
  // its tenant and entry changes so the others reload or drop what they cache of them.
  const shared = config.redisUrl ? await (await import('./store/redis/open.js')).openRedis(config.redisUrl, log) : null;
  const bus = shared?.bus ?? null;

  // gate: registry + limiter + meter; tenantGate goes first on every /v1 route
  const gate = await createGate({
    tenants: stores.tenants,
    usage: stores.usage,
    config,
    log,
    metrics: metrics.registry,
    limiter: shared?.limiter,
    announce: bus ? () => bus.publish('tenants') : undefined,
  });

  // storage: blobs where SVC_GATE_BLOB_URL says (default <dataDir>/blobs); start() sweeps orphans and runs
  // compaction (then hourly). Storage quotas come from the tenant's plan (gate/plans.ts); a tenant unknown
  // to the registry has none.
  const opened = await openBlobStore(config);
  const blobs = opened.blobs;
  log.info({ blobs: opened.where }, 'blob store opened');
  const engineAdmission = new EngineAdmission({ slots: ENGINE_SLOTS, tenantInflight: config.tenantInflight });
  const entries = new EntryService({
    store: stores.entries,
    blobs,
    engine,
    log,
    admission: engineAdmission,
    compressionThresholdBytes: config.compressionThresholdBytes,
    retentionDays: config.retentionDays,
    storageQuota: (tenantId) => {
      const t = gate.registry.get(tenantId);
      return t ? effectiveStorageQuota(t, config) : null;
    },
    blobSweepGraceMs: opened.sweepGraceMs,
    announce: bus ? (changes) => bus.publish('entries', changes) : undefined,
  });
  if (bus) {
    // A burst of tenant changes elsewhere costs one reload running and at most one more queued.
    const reloadTenants = coalesced(() => gate.reloadLocal());
    bus.on('tenants', reloadTenants);
    bus.on('entries', (changes) => entries.applyRemote(changes as EntryChange[]));
    // Messages missed while Redis was away: reload every tenant, drop every cached entry row and core.
    bus.onResync(async () => {
      await reloadTenants();
      entries.applyRemote(gate.registry.list().map((t) => ({ tenantId: t.tenantId })));
    });
    // Subscribed only now that every handler is in place; a tenant change committed elsewhere since the
    // first load (above) is caught by loading once more.
    await bus.start();
    await reloadTenants();
    log.info({ node: bus.nodeId }, 'sharing rate limits and cache invalidation through Redis');
  }
  await entries.start();
  releaseGpuCoresOnRemoval(entries, engine.gpu);
  const purger = new TenantPurger(
    gate.registry,
    async (tenantId) => {
      await stores.jobs.purgeTenant(tenantId);
      return entries.purgeTenant(tenantId);
    },
    log,
  );
  purger.start();

  // simulation: queued and interrupted jobs resume now (after the blob sweep above). Run time is
  // charged through the gate's meter, as a request's CU are (the jobs layer knows nothing of the gate).
  const charger: JobCharger = {
    periodS: SIMULATION_RUN_SECONDS,
    async charge(tenantId) {
      const tenant = gate.registry.get(tenantId);
      if (!tenant) throw new ProblemError(404, 'not_found', `no tenant ${tenantId}`);
      const reservation = await gate.meter.reserve(tenant, 'simulation_run', effectiveQuota(tenant, config));
      gate.metrics.cuCharged.add('simulation_run', reservation.milli);
      await gate.meter.charge([reservation]);
    },
  };
  const scheduler = new JobScheduler({
    store: stores.jobs,
    outputs: entries,
    runner: engine,
    concurrency: config.simConcurrency,
    log,
    charger,
    quantumS: config.jobQuantumS,
    queuedPerTenant: config.jobsQueuedPerTenant,
    tenantActive: (tenantId) => gate.registry.get(tenantId)?.active === true,
    // A cancelled solver settles in milliseconds; one that does not stays held until its lease runs out.
    stopTimeoutMs: Math.max(1000, config.shutdownGraceS * 1000),
    worker: config.roles.worker,
    // The other nodes' workers look at the queue at once rather than at their next poll.
    announce: bus
      ? () => void bus.publish(JOBS_TOPIC).catch((err: unknown) => log.warn({ err }, 'could not announce a job change to the other nodes'))
      : undefined,
  });
  if (bus) {
    bus.on(JOBS_TOPIC, () => scheduler.poke());
    bus.onResync(() => scheduler.poke());
  }
  await scheduler.start();
  log.info({ roles: config.roles, node: scheduler.owner }, 'node roles');

  // Every route is mounted from its description in src/routes/<feature>/endpoints.ts, which also makes the OpenAPI document.
  const router = new Router();
  // Binary put bodies and dense serve outputs: up to 128 MiB of idle buffers of 1 MiB or
  // more kept for reuse (see runtime/buffer-pool.ts for why a fresh large buffer is slow).
  const buffers = new BufferPool({ maxIdleBytes: 128 << 20, minBytes: 1 << 20 });
  const budget = new ByteBudget({ limit: config.maxInflightBytes });
  const admission = new RouteAdmission(engineAdmission, budget);
  // Between the gate and a route's handler: an engine request counts against its tenant's in-flight
  // limit, then the body is read (its bytes reserved in the budget first).
  const api = new Api(router, { tenant: gate.tenantGate, admin: gate.adminGate }, (ep) => [
    ...(ep.engine ? [admission.engineRequest] : []),
    bodyReader(ep, { maxPayloadBytes: config.maxPayloadBytes, admission: ep.auth === 'tenant' ? admission : undefined }),
  ]);
  let draining = false;
  registerHealthRoutes(api, { db: stores, engine, version: VERSION, startedAt, draining: () => draining });
  registerMetricsRoute(api, metrics.registry);
  // A node without the api role (SVC_GATE_ROLES=worker) serves health and metrics only.
  let query: ReturnType<typeof registerQueryRoutes> | null = null;
  if (config.roles.api) {
    registerAdminRoutes(api, gate, entries.storage, {
      onDeactivated: (tenantId) => {
        scheduler
          .cancelTenant(tenantId)
          .catch((err) => log.error({ err, tenant_id: tenantId }, "cancelling a deactivated tenant's jobs failed"));
      },
    });
    registerAccountRoutes(api, gate, entries.storage);
    registerReferenceRoutes(api);
    registerConsoleRoutes(api);
    registerStorageRoutes(api, { entries, engine, config, buffers, admission });
    registerSimulationRoutes(api, { scheduler, runner: engine });
    query = registerQueryRoutes(api, { entries, search: stores.entries, engine, config, admission });
  }
  registerServiceGauges(metrics.registry, {
    coreCache: () => query?.cache.stats() ?? { entries: 0, bytes: 0, budgetBytes: 0, hits: 0, misses: 0 },
    jobs: () => ({ queued: scheduler.queuedCount, running: scheduler.runningCount }),
    engineAdmission: () => engineAdmission.stats(),
    inflightBytes: () => budget.stats(),
    dbFile,
    blobs,
    build: { version: VERSION, backend: engine.info().backend },
  });

  let closing: Promise<void> | null = null;
  const app = createApp({ log, router, metrics: metrics.http, closing: () => closing !== null });
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app.callback());
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  log.info({ host: config.host, port, url, dataDir: config.dataDir, engine: engine.info() }, 'listening');

  return {
    port,
    url,
    router,
    close() {
      closing ??= (async () => {
        // A balancer that health-checks the node stops choosing it while it still serves every request,
        // so that no connection is in its accept queue when the listener closes (docs/deploy.md).
        draining = true;
        if (config.shutdownDelayS > 0) {
          log.info({ delay_s: config.shutdownDelayS }, 'draining: /gate/health answers 503 while requests are still served');
          await new Promise((r) => setTimeout(r, config.shutdownDelayS * 1000));
        }
        // Stop accepting at once (a balancer's next connection is refused, which it may retry elsewhere
        // whatever the method); requests in flight run to their end (each response then closes its
        // connection, see createApp), up to the grace period, after which the rest are cut off.
        // Only the listener: http.Server.close would also drop the idle keep-alive connections at once,
        // and a balancer may be writing a request on one at that moment; it cannot tell whether such a
        // request was processed, so it may not retry a put. With SVC_GATE_SHUTDOWN_IDLE_S the balancer's
        // own shorter idle timeout closes them first; whatever is left is closed after it.
        const stopped = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
        const idleS = Math.min(config.shutdownIdleS, config.shutdownGraceS);
        if (idleS === 0) server.closeIdleConnections();
        const idle = idleS > 0 ? setTimeout(() => server.closeIdleConnections(), idleS * 1000) : undefined;
        const grace = setTimeout(() => {
          log.warn({ grace_s: config.shutdownGraceS }, 'shutdown grace period over; closing the remaining connections');
          server.closeAllConnections();
        }, config.shutdownGraceS * 1000);
        const jobsStopped = scheduler.stop(); // stops claiming; running jobs cancelled and released to the queue
        await stopped;
        clearTimeout(grace);
        clearTimeout(idle);
        await jobsStopped;
        entries.stop();
        purger.stop();
        await stores.close(); // waits for queued writes (metered CU among them), then closes the metadata store
        opened.close();
        await shared?.close();
      })();
      return closing;
    },
  };
}
