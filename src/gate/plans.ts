// What each plan grants (CONTRACT.md sections 5 and 8) and how a tenant record's effective limits
// follow from its plan, its custom values (enterprise only) and the SVC_GATE_* defaults.
import type { Config } from '../config.js';
import type { Plan } from './context.js';

export interface RateLimit {
  requests: number;
  window_s: number;
}

export interface PlanTerms {
  /** null: the SVC_GATE_DEFAULT_RATE_LIMIT_* defaults. */
  rateLimit: RateLimit | null;
  /** CU per UTC month; null: SVC_GATE_ENTERPRISE_MONTHLY_QUOTA. */
  monthlyQuota: number | null;
  /** Bytes stored (live and hidden-but-unpurged versions); null: SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES. */
  storageQuotaBytes: number | null;
}

const GiB = 1024 ** 3;

export const PLAN_TERMS: Readonly<Record<Plan, PlanTerms>> = {
  starter: { rateLimit: { requests: 10, window_s: 60 }, monthlyQuota: 1000, storageQuotaBytes: GiB },
  builder: { rateLimit: { requests: 100, window_s: 60 }, monthlyQuota: 50_000, storageQuotaBytes: 100 * GiB },
  pro: { rateLimit: { requests: 1000, window_s: 60 }, monthlyQuota: 500_000, storageQuotaBytes: 1024 * GiB },
  enterprise: { rateLimit: null, monthlyQuota: null, storageQuotaBytes: null },
};

export type GateLimitsConfig = Pick<
  Config,
  'defaultRateLimitRequests' | 'defaultRateLimitWindowS' | 'enterpriseMonthlyQuota' | 'enterpriseStorageQuotaBytes'
>;

/** The limits a tenant record has; null fields fall back as effectiveRateLimit/effectiveQuota say. */
export interface LimitFields {
  plan: Plan;
  rateLimit: RateLimit | null;
  monthlyQuota: number | null;
  /** A custom storage quota (enterprise only); null: the plan's. */
  storageQuotaBytes: number | null;
}

/** A record without a rate limit uses the env defaults (CONTRACT.md section 5). */
export function effectiveRateLimit(t: LimitFields, cfg: GateLimitsConfig): RateLimit {
  return t.rateLimit ?? { requests: cfg.defaultRateLimitRequests, window_s: cfg.defaultRateLimitWindowS };
}

export function effectiveQuota(t: LimitFields, cfg: GateLimitsConfig): number {
  return t.monthlyQuota ?? PLAN_TERMS[t.plan].monthlyQuota ?? cfg.enterpriseMonthlyQuota;
}

/** The tenant's storage quota in bytes; null: unlimited (SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES=-1). */
export function effectiveStorageQuota(t: LimitFields, cfg: GateLimitsConfig): number | null {
  const bytes = t.storageQuotaBytes ?? PLAN_TERMS[t.plan].storageQuotaBytes ?? cfg.enterpriseStorageQuotaBytes;
  return bytes < 0 ? null : bytes;
}

/** Custom limits given to create or update-tier (enterprise only, see routes/admin/custom-limits.ts). */
export interface CustomLimits {
  rateLimit?: RateLimit;
  monthlyQuota?: number;
  storageQuotaBytes?: number;
}

/**
 * The stored limits for a plan change: starter/builder/pro store their plan's rate limit and monthly
 * quota (and no storage quota: PLAN_TERMS gives it); enterprise stores the custom values given (or
 * null: follow the env defaults, also when they change later).
 */
export function limitsForPlan(plan: Plan, custom: CustomLimits): LimitFields {
  if (plan !== 'enterprise') {
    const terms = PLAN_TERMS[plan];
    return { plan, rateLimit: { ...terms.rateLimit! }, monthlyQuota: terms.monthlyQuota, storageQuotaBytes: null };
  }
  return {
    plan,
    rateLimit: custom.rateLimit ?? null,
    monthlyQuota: custom.monthlyQuota ?? null,
    storageQuotaBytes: custom.storageQuotaBytes ?? null,
  };
}
