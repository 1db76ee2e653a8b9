// The gate's Prometheus families: what it admitted and refused, and the CU it charged. Tenants are
// never a label (a scrape must not grow with the customer list); the tenant count is a gauge.
import { Counter, Gauge, type Registry } from 'prom-client';
import { MILLI } from './meter.js';
import type { TenantRegistry } from './registry.js';

/**
 * CU charged by operation, kept as integer thousandths of a CU and divided only when a scrape reads
 * them, so a total is the exact sum of its charges (three lists show 0.3, never 0.30000000000000004).
 */
export interface CuChargedCounter {
  add(operation: string, milli: number): void;
}

export interface GateMetrics {
  /** Requests that reached the tenant gate: admitted, rate_limited or unauthenticated. */
  requests: Counter<'outcome'>;
  /** Admitted requests refused by the namespace ACL or the monthly quota. */
  denied: Counter<'reason'>;
  /** CU charged (2xx responses only), by operation. */
  cuCharged: CuChargedCounter;
}

export type GateOutcome = 'admitted' | 'rate_limited' | 'unauthenticated';
export type GateDenial = 'namespace_forbidden' | 'quota_exceeded';

export function createGateMetrics(registry: Registry, tenants: TenantRegistry): GateMetrics {
  const metrics: GateMetrics = {
    requests: new Counter({
      name: 'ttstore_gate_requests_total',
      help: 'Requests that reached the tenant gate, by outcome (rate_limited: answered 429).',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    denied: new Counter({
      name: 'ttstore_gate_denied_total',
      help: 'Admitted requests refused by the namespace ACL (403) or the monthly quota (402).',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    cuCharged: cuChargedCounter(registry),
  };
  // Zero series exist from the start, so rate() over them works before the first event.
  for (const outcome of ['admitted', 'rate_limited', 'unauthenticated'] satisfies GateOutcome[]) metrics.requests.inc({ outcome }, 0);
  for (const reason of ['namespace_forbidden', 'quota_exceeded'] satisfies GateDenial[]) metrics.denied.inc({ reason }, 0);
  new Gauge({
    name: 'ttstore_gate_tenants',
    help: 'Tenants in the registry, by state.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const all = tenants.list();
      const active = all.filter((t) => t.active).length;
      this.set({ state: 'active' }, active);
      this.set({ state: 'inactive' }, all.length - active);
    },
  });
  return metrics;
}

function cuChargedCounter(registry: Registry): CuChargedCounter {
  const milliByOperation = new Map<string, number>();
  new Counter({
    name: 'ttstore_gate_cu_charged_total',
    help: 'Compute units charged since this process started, by operation.',
    labelNames: ['operation'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [operation, milli] of milliByOperation) this.inc({ operation }, milli / MILLI);
    },
  });
  return {
    add(operation, milli) {
      milliByOperation.set(operation, (milliByOperation.get(operation) ?? 0) + milli);
    },
  };
}
