// The admin rules a schema cannot state (CONTRACT.md section 5): custom limits are an enterprise term.
// Everything else about admin bodies is in the schemas of ./endpoints.ts.
import { badRequest } from '../../http/errors.js';
import type { Plan } from '../../gate/context.js';
import type { CustomLimits, RateLimit } from '../../gate/plans.js';

export interface CustomLimitFields {
  rate_limit?: RateLimit;
  monthly_quota?: number;
  storage_quota_bytes?: number;
}

export function customLimits(p: Plan, body: CustomLimitFields): CustomLimits {
  const rl = body.rate_limit;
  const q = body.monthly_quota;
  const sq = body.storage_quota_bytes;
  const given = (['rate_limit', 'monthly_quota', 'storage_quota_bytes'] as const).find((f) => body[f] !== undefined);
  if (given !== undefined && p !== 'enterprise') {
    throw badRequest(`rate_limit, monthly_quota and storage_quota_bytes can be set only with plan enterprise (the ${p} plan fixes them)`, {
      field: given,
    });
  }
  return {
    ...(rl !== undefined ? { rateLimit: rl } : {}),
    ...(q !== undefined ? { monthlyQuota: q } : {}),
    ...(sq !== undefined ? { storageQuotaBytes: sq } : {}),
  };
}
