// CONTRACT.md section 5: a true sliding window per tenant. Windows are short custom enterprise
// limits so the suite stays quick.
import { expect } from 'chai';
import { SlidingWindowLimiter } from '../../src/gate/rate-limit.js';
import { slidingWindowContract } from '../helpers/rate-window-contract.js';
import { http, skipAgainstExternal, startServer, type Reply, type TestServer } from '../helpers/server.js';
import { admin, createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sleepUntil = (t: number) => sleep(Math.max(0, t - Date.now()));

for (const kind of ['slots', 'log'] as const)
  describe(`gate: SlidingWindowLimiter on ${kind === 'slots' ? 'rate-limiter-flexible slots' : 'the compact log'} (in process)`, () => {
    slidingWindowContract(
      () => new SlidingWindowLimiter({ slotLimitMax: kind === 'slots' ? 1000 : 0 }),
      (rl) => expect(rl.kindOf('x')).to.equal(kind),
    );
  });

describe('gate: SlidingWindowLimiter moving between slots and the log', () => {
  it('keeps the admissions in the window when a limit crosses the slot threshold, both ways', async () => {
    const rl = new SlidingWindowLimiter({ slotLimitMax: 4 });
    for (let i = 0; i < 3; i++) expect((await rl.hit('m', { requests: 3, window_s: 60 })).admitted).to.equal(true);
    expect(rl.kindOf('m')).to.equal('slots');
    const up = await rl.hit('m', { requests: 6, window_s: 60 });
    expect(rl.kindOf('m')).to.equal('log');
    expect(up).to.include({ admitted: true, remaining: 2 });
    await rl.hit('m', { requests: 6, window_s: 60 });
    await rl.hit('m', { requests: 6, window_s: 60 });
    expect((await rl.hit('m', { requests: 6, window_s: 60 })).admitted).to.equal(false);
    const down = await rl.hit('m', { requests: 2, window_s: 60 });
    expect(rl.kindOf('m')).to.equal('slots');
    expect(down).to.include({ admitted: false, remaining: 0 });
    const back = await rl.hit('m', { requests: 4, window_s: 60 });
    // shrinking to 2 kept the newest 2 (all a limit of 2 can see); growing to 4 finds those 2
    expect(back).to.include({ admitted: true, remaining: 1 });
  });
});

describe('gate: rate limits over HTTP', () => {
  let server: TestServer;
  const list = (t: CreatedTenant) => http(server.url, 'GET', '/v1/list/default', { headers: tenantHeaders(t) });
  const burst = (t: CreatedTenant, n: number) => Promise.all(Array.from({ length: n }, () => list(t)));
  const statuses = (rs: Reply[]) => rs.map((r) => r.status);
  const count = (rs: Reply[], s: number) => rs.filter((r) => r.status === s).length;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.destroy();
  });

  it('30 concurrent requests of a starter tenant give exactly 10 successes and 20 429s', async () => {
    const t = await createTenant(server, { plan: 'starter' });
    const rs = await burst(t, 30);
    expect(count(rs, 200), statuses(rs).join(',')).to.equal(10);
    expect(count(rs, 429)).to.equal(20);
    // each admitted request saw its own Remaining, 9 down to 0
    const remaining = rs
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((a, b) => b - a);
    expect(remaining).to.deep.equal([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const r of rs) {
      expect(r.headers.get('x-ratelimit-limit')).to.equal('10');
      expect(r.headers.get('x-ratelimit-reset')).to.match(/^\d+$/);
    }
    const rejected = rs.find((r) => r.status === 429)!;
    expect(rejected.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(rejected.body).to.include({ code: 'rate_limited', limit: 10, window_s: 60 });
    const retry = Number(rejected.headers.get('retry-after'));
    expect(Number.isInteger(retry)).to.equal(true);
    expect(retry).to.be.within(59, 60);
    expect(rejected.body.retry_after_s).to.equal(retry);
    expect(rejected.headers.get('x-ratelimit-remaining')).to.equal('0');
    // the 429s cost nothing
    const usage = await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`);
    expect(usage.body.cus_used).to.be.closeTo(1.0, 1e-9);
  });

  it('the headers count down one request at a time and Reset is when the oldest request leaves', async () => {
    const t = await createTenant(server, { rate_limit: { requests: 4, window_s: 30 } });
    const started = Date.now() / 1000;
    const seen: Array<[string | null, string | null]> = [];
    for (let i = 0; i < 5; i++) {
      const r = await list(t);
      seen.push([r.headers.get('x-ratelimit-remaining'), r.headers.get('x-ratelimit-reset')]);
    }
    expect(seen.map((s) => s[0])).to.deep.equal(['3', '2', '1', '0', '0']);
    const reset = Number(seen[0]![1]);
    expect(seen.every((s) => Number(s[1]) === reset)).to.equal(true);
    expect(reset).to.be.within(Math.floor(started + 30), Math.ceil(started + 31));
  });

  it('no full burst at a window boundary; after a quiet window the whole limit is back', async () => {
    const t = await createTenant(server, { rate_limit: { requests: 5, window_s: 2 } });
    const t0 = Date.now();
    expect((await list(t)).status).to.equal(200); // opens a fixed window at t0, were this a fixed window
    await sleepUntil(t0 + 1500);
    const late = await burst(t, 4); // late in that window: now 5 in the last 2 s
    expect(statuses(late)).to.deep.equal([200, 200, 200, 200]);
    await sleepUntil(t0 + 2250); // past the boundary: the first request has left, the 4 late ones have not
    const edge = await burst(t, 5);
    expect(count(edge, 200), statuses(edge).join(',')).to.be.at.most(1);
    expect(count(edge, 200)).to.equal(1);
    const rejected = edge.find((r) => r.status === 429)!;
    expect(rejected.body).to.include({ limit: 5, window_s: 2 });
    expect(Number(rejected.headers.get('retry-after'))).to.be.within(1, 2);
    await sleep(2100); // a full quiet window
    const fresh = await burst(t, 6);
    expect(count(fresh, 200)).to.equal(5);
    expect(count(fresh, 429)).to.equal(1);
  });

  it('changing the plan changes the limit at once', async () => {
    skipAgainstExternal('the other nodes learn of a plan change within a second, not at once');
    const t = await createTenant(server, { plan: 'starter' });
    expect(count(await burst(t, 11), 200)).to.equal(10);
    expect((await list(t)).status).to.equal(429);
    await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'builder' });
    const r = await list(t);
    expect(r.status).to.equal(200);
    expect(r.headers.get('x-ratelimit-limit')).to.equal('100');
    expect(r.headers.get('x-ratelimit-remaining')).to.equal('89');
    await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'starter' });
    const down = await list(t);
    expect(down.status).to.equal(429);
    expect(down.headers.get('x-ratelimit-limit')).to.equal('10');
  });

  it('limits are per tenant: one tenant at its limit does not slow another', async () => {
    const a = await createTenant(server, { rate_limit: { requests: 2, window_s: 60 } });
    const b = await createTenant(server, { rate_limit: { requests: 2, window_s: 60 } });
    expect(count(await burst(a, 4), 200)).to.equal(2);
    expect(count(await burst(b, 2), 200)).to.equal(2);
  });
});
