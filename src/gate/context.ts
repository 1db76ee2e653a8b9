// What the gate hands to the routes behind it, on ctx.state. Routes know nothing else of the gate.
import type { Context } from 'koa';
import type { ChargedOperation } from './operations.js';

export const PLANS = ['starter', 'builder', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** The authenticated tenant of a /v1 request (ctx.state.tenant). */
export interface RequestTenant {
  tenantId: string;
  plan: Plan;
  namespaces: readonly string[];
}

/** ctx.state.gate on a /v1 request. */
export interface Authorizer {
  /**
   * Call once per request, after the request was validated and before any work: checks the
   * namespace ACL (403 namespace_forbidden; pass null for operations without a namespace) and
   * reserves the operation's CU against the monthly quota (402 quota_exceeded). The reservation is
   * charged when the response is 2xx and released otherwise. Rejects with the problem (awaited:
   * on a shared usage store the reservation is held there).
   */
  authorize(namespace: string | null, op: ChargedOperation): Promise<void>;
}

export interface GateState {
  tenant: RequestTenant;
  gate: Authorizer;
}

/** The gate's state of a request behind the tenant gate. */
export function gateOf(ctx: Context): GateState {
  return ctx.state as GateState;
}
