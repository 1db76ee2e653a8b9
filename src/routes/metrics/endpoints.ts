// GET /gate/metrics: the process's Prometheus registry, for the operator (service key).
import type { Endpoint } from '../../http/endpoint.js';

export const METRICS_ENDPOINTS = {
  metrics: {
    id: 'metrics',
    method: 'get',
    path: '/gate/metrics',
    tag: 'operations',
    auth: 'admin',
    summary: 'Prometheus metrics (text exposition format 0.0.4)',
    answers: { 200: { description: 'Metrics.', content: { 'text/plain': { description: 'Prometheus text format.' } } } },
  },
} satisfies Record<string, Endpoint>;
