// The admin rules a schema cannot state (CONTRACT.md section 5): custom limits are an enterprise term.
// Everything else about admin bodies is in the schemas of src/api/admin.ts.
import { badRequest } from '../errors.js';
import type { Plan } from '../gate/context.js';
import type { RateLimit } from '../gate/plans.js';

export function customLimits(p: Plan, body: { rate_limit?: RateLimit; monthly_quota?: number }): { rateLimit?: RateLimit; monthlyQuota?: number } {
  const rl = body.rate_limit;
  const q = body.monthly_quota;
  if ((rl !== undefined || q !== undefined) && p !== 'enterprise') {
    throw badRequest(`rate_limit and monthly_quota can be set only with plan enterprise (the ${p} plan fixes them)`,
      { field: rl !== undefined ? 'rate_limit' : 'monthly_quota' });
  }
  return { ...(rl !== undefined ? { rateLimit: rl } : {}), ...(q !== undefined ? { monthlyQuota: q } : {}) };
}
