// The gate assembled: registry, limiter, meter and the two middlewares. Built once by the
// composition root (src/server.ts) after the database is open with gateMigrations.
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Database } from '../store/db.js';
import { Meter } from './meter.js';
import { createAdminGate, createTenantGate, type GateCounters } from './middleware.js';
import { SlidingWindowLimiter } from './rate-limit.js';
import { TenantRegistry } from './registry.js';
import { resolveServiceKey } from './service-key.js';

export { gateMigrations } from './migrations.js';

export interface Gate {
  registry: TenantRegistry;
  limiter: SlidingWindowLimiter;
  meter: Meter;
  counters: GateCounters;
  config: Config;
  /** First middleware of every /v1 route. */
  tenantGate: Middleware;
  /** First middleware of every /gate/admin/*, /gate/onboard/* and /gate/metrics route. */
  adminGate: Middleware;
  /** Re-read tenants (and usage of tenants new to this process) from disk; returns the tenant count. */
  reload(): Promise<number>;
}

export async function createGate(opts: { db: Database; config: Config; log: Logger }): Promise<Gate> {
  const { db, config, log } = opts;
  const serviceKey = await resolveServiceKey(config.serviceKey, config.dataDir, log);
  const registry = new TenantRegistry(db, log);
  const meter = new Meter(db, log);
  const limiter = new SlidingWindowLimiter();
  const counters: GateCounters = { admitted: 0, rateLimited: 0, unauthenticated: 0, forbidden: 0, quotaExceeded: 0 };
  const reload = async (): Promise<number> => {
    const n = await registry.reload();
    await meter.load();
    return n;
  };
  const tenants = await reload();
  log.info({ tenants }, 'tenant registry loaded');
  return {
    registry,
    limiter,
    meter,
    counters,
    config,
    tenantGate: createTenantGate({ registry, limiter, meter, limits: config, log, counters }),
    adminGate: createAdminGate({ registry, serviceKey }),
    reload,
  };
}
