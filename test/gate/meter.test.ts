// The meter against a shared usage store (several nodes): a burst of one tenant's requests shares one
// quota block, and its charges are written one write at a time, each taking every charge made meanwhile.
import { expect } from 'chai';
import { Meter, MILLI, USAGE_WRITE_PACE_MS } from '../../src/gate/meter.js';
import { OPERATIONS } from '../../src/gate/operations.js';
import type { TenantRecord } from '../../src/gate/registry.js';
import type { Logger } from '../../src/runtime/log.js';
import type { ChargedAmount, HeldQuota, QuotaHold, UsageAmount, UsageStore } from '../../src/store/usage.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A shared store in memory whose calls take `latencyMs`, counting what the meter asks of it. */
class SlowSharedUsage implements UsageStore {
  readonly shared = true;
  holds = 0;
  writes = 0;
  writing = 0;
  mostWriting = 0;
  used = 0;
  held = new Map<string, number>();
  private seq = 0;

  constructor(private readonly latencyMs: number) {}

  async ofPeriod(): Promise<UsageAmount[]> {
    return [];
  }
  async ofTenant(): Promise<UsageAmount[]> {
    return [];
  }
  async totals(): Promise<Map<string, number>> {
    return new Map();
  }
  async add(take: () => Iterable<ChargedAmount>): Promise<void> {
    this.writes++;
    this.mostWriting = Math.max(this.mostWriting, ++this.writing);
    try {
      await sleep(this.latencyMs);
      for (const a of take()) {
        this.used += a.milli;
        for (const s of a.settles ?? []) this.held.set(s.id, (this.held.get(s.id) ?? 0) - s.milli);
      }
      await sleep(this.latencyMs);
    } finally {
      this.writing--;
    }
  }
  async hold(h: QuotaHold): Promise<HeldQuota | null> {
    this.holds++;
    await sleep(this.latencyMs);
    const inUse = this.used + [...this.held.values()].reduce((a, b) => a + b, 0);
    const block = h.blockMilli ?? h.milli;
    const milli = inUse + 2 * block <= h.quotaMilli ? block : inUse + h.milli <= h.quotaMilli ? h.milli : 0;
    if (milli === 0) return null;
    const id = String(++this.seq);
    this.held.set(id, milli);
    return { id, milli };
  }
  async unhold(id: string): Promise<void> {
    this.held.delete(id);
  }
  async shrink(id: string, milli: number): Promise<void> {
    this.held.set(id, (this.held.get(id) ?? 0) - milli);
  }
}

const log = { error: () => undefined } as unknown as Logger;
const tenant = { tenantId: 't1' } as TenantRecord;
const GET = Math.round(OPERATIONS.get.cu * MILLI);

describe('meter on a shared usage store', () => {
  it('a burst of one tenant draws from one block instead of holding a block per request', async () => {
    const store = new SlowSharedUsage(5);
    const meter = new Meter(store, log);
    // get costs 0.1 CU: a block holds 100 requests' cost, far below 1/1000 of this quota.
    const rs = await Promise.all(Array.from({ length: 50 }, () => meter.reserve(tenant, 'get', 1e9)));
    expect(store.holds).to.equal(1);
    expect(new Set(rs.map((r) => r.hold)).size).to.equal(1);
    await meter.charge(rs);
    expect(store.used).to.equal(50 * GET);
  });

  it('near the quota, requests that cannot share a block each hold their own amount', async () => {
    const store = new SlowSharedUsage(2);
    const meter = new Meter(store, log);
    // 1 CU of quota: no block of 10 requests fits twice, so each get holds its own 0.1 CU.
    const rs = await Promise.allSettled(Array.from({ length: 12 }, () => meter.reserve(tenant, 'get', 1)));
    expect(rs.filter((r) => r.status === 'fulfilled')).to.have.length(10);
    expect(store.holds).to.be.at.least(10);
  });

  it('writes charges one write at a time, each taking the charges made while the one before ran', async () => {
    const store = new SlowSharedUsage(5);
    const meter = new Meter(store, log);
    const rs = await Promise.all(Array.from({ length: 60 }, () => meter.reserve(tenant, 'get', 1e9)));
    const writesBefore = store.writes;
    // Charges arrive over about 30 ms, as requests finish; each settles once its write (and so every
    // write before it) committed.
    let started = 0;
    await Promise.all(
      rs.map(async (r, i) => {
        await sleep(i / 2);
        const mine = ++started;
        await meter.charge([r]);
        expect(store.used).to.be.at.least(mine * GET);
      }),
    );
    expect(store.mostWriting).to.equal(1);
    expect(store.used).to.equal(60 * GET);
    // 30 ms of charges against writes of 10 ms: a handful of writes, not 60.
    expect(store.writes - writesBefore).to.be.within(2, 8);
  });

  it("writes a lone request's charge at once, and paces the writes of a busy node", async () => {
    const store = new SlowSharedUsage(0);
    const meter = new Meter(store, log);
    // One request at a time: each charge is its own write, none waits for the pace.
    const started = performance.now();
    for (let i = 0; i < 10; i++) await meter.charge([await meter.reserve(tenant, 'get', 1e9)]);
    expect(store.writes).to.equal(10);
    expect(performance.now() - started).to.be.below(10 * USAGE_WRITE_PACE_MS);
    // 200 requests in flight, finishing four a millisecond: once writes take several charges each, one
    // write per pace at most, not one per request.
    const rs = await Promise.all(Array.from({ length: 200 }, () => meter.reserve(tenant, 'get', 1e9)));
    const before = store.writes;
    const t0 = performance.now();
    await Promise.all(rs.map((r, i) => sleep(i / 4).then(() => meter.charge([r]))));
    const elapsed = performance.now() - t0;
    expect(store.writes - before).to.be.at.most(Math.ceil(elapsed / USAGE_WRITE_PACE_MS) + 3);
    expect(store.used).to.equal(210 * GET);
  });
});
