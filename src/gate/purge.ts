// Compaction of deactivated tenants: once a tenant's purge_after has passed, its data is removed by
// the storage layer's purge function and the tenant row is marked purged (the row itself stays, so
// the tenant_id is never reissued and its usage history remains). Runs at start, then hourly.
import type { Logger } from '../runtime/log.js';
import type { TenantRegistry } from './registry.js';

export class TenantPurger {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(
    private readonly registry: TenantRegistry,
    private readonly purgeData: (tenantId: string) => Promise<number>,
    private readonly log: Logger,
    private readonly intervalMs = 3_600_000,
  ) {}

  /** Purge every tenant due now; returns how many tenants were purged. */
  sweep(): Promise<number> {
    this.running ??= (async () => {
      try {
        let n = 0;
        for (const tenantId of await this.registry.duePurges()) {
          const entries = await this.purgeData(tenantId);
          await this.registry.markPurged(tenantId);
          this.log.info({ tenant_id: tenantId, entries }, 'purged a deactivated tenant after its retention period');
          n++;
        }
        return n;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  start(): void {
    const run = () => this.sweep().catch((err) => this.log.error({ err }, 'tenant purge failed'));
    void run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
