// GET /gate/metrics: the process's Prometheus registry (service key, like the other admin paths).
import type { Registry } from 'prom-client';
import { METRICS_ENDPOINTS } from './endpoints.js';
import type { Api } from '../../http/endpoint.js';

export function registerMetricsRoute(api: Api, registry: Registry): void {
  api.mount(METRICS_ENDPOINTS.metrics, async (ctx) => {
    const body = await registry.metrics();
    ctx.set('Cache-Control', 'no-store');
    ctx.type = registry.contentType;
    ctx.body = body;
  });
}
