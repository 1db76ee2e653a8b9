// GET /gate/health: no authentication; says what the engine runs on and whether the database answers.
import type { Api } from '../../http/endpoint.js';
import { HEALTH_ENDPOINTS } from './endpoints.js';
import type { Stores } from '../../store/stores.js';
import type { Engine } from '../../engine/types.js';

export interface HealthDeps {
  db: Pick<Stores, 'ping'>;
  engine: Engine;
  version: string;
  startedAt: number;
  /** True once the node is stopping (SVC_GATE_SHUTDOWN_DELAY_S): balancers that health-check it stop choosing it. */
  draining: () => boolean;
}

export function registerHealthRoutes(api: Api, deps: HealthDeps): void {
  api.mount(HEALTH_ENDPOINTS.health, async (ctx) => {
    let db = 'ok';
    try {
      await deps.db.ping();
    } catch {
      db = 'error';
    }
    const info = deps.engine.info();
    const status = deps.draining() ? 'draining' : db === 'ok' ? 'ok' : 'degraded';
    ctx.status = status === 'ok' ? 200 : 503;
    ctx.body = {
      status,
      version: deps.version,
      uptime_s: Math.round((Date.now() - deps.startedAt) / 10) / 100,
      engine: { backend: info.backend, cuda_devices: info.cudaDevices, blas: info.blas, threads: info.threads },
      db,
    };
  });
}
