// The gate assembled: registry, limiter, meter and the two middlewares. Built once by the
// composition root (src/server.ts) over the tenant and usage stores.
import type { Middleware } from 'koa';
import { Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { Logger } from '../runtime/log.js';
import type { TenantStore } from '../store/tenants.js';
import type { UsageStore } from '../store/usage.js';
import { Meter } from './meter.js';
import { createAdminGate, createTenantGate } from './middleware.js';
import { createGateMetrics, type GateMetrics } from './metrics.js';
import { SlidingWindowLimiter, type RateLimiter } from './rate-limit.js';
import { TenantRegistry } from './registry.js';
import { resolveServiceKey } from './service-key.js';

export interface Gate {
  registry: TenantRegistry;
  limiter: RateLimiter;
  meter: Meter;
  metrics: GateMetrics;
  config: Config;
  /** First middleware of every /v1 route. */
  tenantGate: Middleware;
  /** First middleware of every /gate/admin/*, /gate/onboard/* and /gate/metrics route. */
  adminGate: Middleware;
  /** Re-read tenants (and usage of tenants new to this process) from the store, on every node; returns this node's tenant count. */
  reload(): Promise<number>;
  /** The same on this node only (another node announced a change). */
  reloadLocal(): Promise<number>;
}

export async function createGate(opts: {
  tenants: TenantStore;
  usage: UsageStore;
  config: Config;
  log: Logger;
  metrics?: Registry;
  /** Shared by the nodes (store/redis); default: this process's own SlidingWindowLimiter. */
  limiter?: RateLimiter;
  /** Tell the other nodes to reload their tenants (after a change or a reload here); default: one node. */
  announce?: () => Promise<void>;
}): Promise<Gate> {
  const { config, log } = opts;
  const serviceKey = await resolveServiceKey(config.serviceKey, config.dataDir, log);
  const registry = new TenantRegistry(opts.tenants, log);
  const meter = new Meter(opts.usage, log);
  const limiter = opts.limiter ?? new SlidingWindowLimiter();
  const metrics = createGateMetrics(opts.metrics ?? new Registry(), registry);
  const reloadLocal = async (): Promise<number> => {
    const n = await registry.reload();
    await meter.load();
    return n;
  };
  const announce = opts.announce;
  if (announce) {
    registry.onChange(() => {
      announce().catch((err: unknown) => log.error({ err }, 'could not announce a tenant change to the other nodes'));
    });
  }
  const reload = async (): Promise<number> => {
    const n = await reloadLocal();
    await announce?.();
    return n;
  };
  const tenants = await reloadLocal();
  log.info({ tenants }, 'tenant registry loaded');
  return {
    registry,
    limiter,
    meter,
    metrics,
    config,
    tenantGate: createTenantGate({ registry, limiter, meter, limits: config, log, metrics }),
    adminGate: createAdminGate({ registry, serviceKey }),
    reload,
    reloadLocal,
  };
}
