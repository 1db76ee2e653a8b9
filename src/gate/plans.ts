// What each plan grants (CONTRACT.md section 5) and how a tenant record's effective limits follow
// from its plan, its custom values (enterprise only) and the SVC_GATE_* defaults.
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
}

export const PLAN_TERMS: Readonly<Record<Plan, PlanTerms>> = {
  starter: { rateLimit: { requests: 10, window_s: 60 }, monthlyQuota: 1000 },
  builder: { rateLimit: { requests: 100, window_s: 60 }, monthlyQuota: 50_000 },
  pro: { rateLimit: { requests: 1000, window_s: 60 }, monthlyQuota: 500_000 },
  enterprise: { rateLimit: null, monthlyQuota: null },
};

export type GateLimitsConfig = Pick<Config, 'defaultRateLimitRequests' | 'defaultRateLimitWindowS' | 'enterpriseMonthlyQuota'>;

/** The limits a tenant record has; null fields fall back as effectiveRateLimit/effectiveQuota say. */
export interface LimitFields {
  plan: Plan;
  rateLimit: RateLimit | null;
  monthlyQuota: number | null;
}

/** A record without a rate limit uses the env defaults (CONTRACT.md section 5). */
export function effectiveRateLimit(t: LimitFields, cfg: GateLimitsConfig): RateLimit {
  return t.rateLimit ?? { requests: cfg.defaultRateLimitRequests, window_s: cfg.defaultRateLimitWindowS };
}

export function effectiveQuota(t: LimitFields, cfg: GateLimitsConfig): number {
  return t.monthlyQuota ?? PLAN_TERMS[t.plan].monthlyQuota ?? cfg.enterpriseMonthlyQuota;
}

/**
 * The stored limits for a plan change: starter/builder/pro store their plan's values; enterprise
 * stores the custom values given (or null: follow the env defaults, also when they change later).
 */
export function limitsForPlan(plan: Plan, custom: { rateLimit?: RateLimit; monthlyQuota?: number }): LimitFields {
  if (plan !== 'enterprise') {
    const terms = PLAN_TERMS[plan];
    return { plan, rateLimit: { ...terms.rateLimit! }, monthlyQuota: terms.monthlyQuota };
  }
  return { plan, rateLimit: custom.rateLimit ?? null, monthlyQuota: custom.monthlyQuota ?? null };
}
