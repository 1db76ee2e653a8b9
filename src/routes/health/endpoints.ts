// GET /gate/health: liveness for balancers and the operator (no authentication).
import type { Endpoint } from '../../http/endpoint.js';
import { s } from '../../http/schema/types.js';

export const HEALTH_ENDPOINTS = {
  health: {
    id: 'health',
    method: 'get',
    path: '/gate/health',
    tag: 'operations',
    auth: 'none',
    summary: 'Liveness, engine backend and database state',
    answers: {
      200: {
        description:
          'Healthy (503 with status "degraded" when the database does not answer, "draining" while the node is stopping and a balancer should stop choosing it).',
        schema: s.object({
          status: s.enum(['ok', 'degraded', 'draining']),
          version: s.string(),
          uptime_s: s.number(),
          engine: s.object(
            { backend: s.enum(['cpu', 'cuda']), cuda_devices: s.integer(0, 1024), blas: s.string(), threads: s.integer(0, 4096) },
            { additionalProperties: true },
          ),
          db: s.enum(['ok', 'error']),
        }),
      },
    },
    problems: [503],
  },
} satisfies Record<string, Endpoint>;
