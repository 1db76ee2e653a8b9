// A tenant's own account, read with its key: its usage record and its namespaces. What the operator
// reads of any tenant (src/routes/admin), a tenant reads of itself, free (src/gate/operations.ts).
import { NAMESPACED_OPERATIONS } from '../../gate/operations.js';
import { s } from '../../http/schema/types.js';
import type { Endpoint } from '../../http/endpoint.js';
import { periodQuery, tenantUsage } from '../admin/endpoints.js';

const ACCOUNT = 'account';

export const ACCOUNT_ENDPOINTS = {
  own_usage: {
    id: 'own_usage',
    method: 'get',
    path: '/v1/usage',
    tag: ACCOUNT,
    auth: 'tenant',
    operations: ['own_usage'],
    summary: "The caller's usage in a period, by operation, and its stored bytes",
    description:
      'The same record as GET /gate/admin/usage/{tenant_id} for the tenant whose key is presented, never another. ' +
      'Answered even past the monthly quota.',
    query: periodQuery,
    answers: { 200: { description: 'Usage.', schema: tenantUsage } },
    problems: [400],
  },
  own_namespaces: {
    id: 'own_namespaces',
    method: 'get',
    path: '/v1/namespaces',
    tag: ACCOUNT,
    auth: 'tenant',
    operations: ['own_namespaces'],
    summary: "The caller's namespaces and what its key may do in each",
    answers: {
      200: {
        description: 'The namespaces of the key, in the order they were granted.',
        schema: s.object({
          tenant_id: s.string(),
          namespaces: s.array(
            s.object({
              namespace: s.string(),
              operations: s.array(s.enum(NAMESPACED_OPERATIONS), {
                description: 'The operations the key may run in this namespace (the ACL grants a namespace whole).',
              }),
            }),
          ),
        }),
      },
    },
  },
} satisfies Record<string, Endpoint>;
