// CONTRACT.md section 5's sliding window, for every RateLimiter: the in-process one (test/gate/) and
// the one in Redis (test-cluster/). Windows are short custom enterprise limits so the suites stay quick.
import { expect } from 'chai';
import type { RateLimiter } from '../../src/gate/rate-limit.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sleepUntil = (t: number) => sleep(Math.max(0, t - Date.now()));

/** The window's rules as tests of the calling describe(); `make` gives a fresh limiter, `check` looks at one after a hit of key 'x'. */
export function slidingWindowContract<L extends RateLimiter>(make: () => L, check?: (rl: L) => void): void {
  it('admits exactly `requests` per window, counting only admitted requests, with exact retry and reset', async () => {
    const rl = make();
    const limit = { requests: 3, window_s: 1 };
    const t0 = Date.now();
    const first = await Promise.all(Array.from({ length: 5 }, () => rl.hit('a', limit)));
    expect(first.map((d) => d.admitted)).to.deep.equal([true, true, true, false, false]);
    expect(first.map((d) => d.remaining)).to.deep.equal([2, 1, 0, 0, 0]);
    for (const d of first) expect(d.resetAtMs).to.be.within(t0 + 1000 - 2, Date.now() + 1000); // ms clock readings
    expect(first[3]!.retryAfterMs).to.be.within(1, 1000);
    // rejected requests took nothing: once the first three leave, three are admitted again
    await sleepUntil(first[3]!.resetAtMs + 20);
    const again = await Promise.all(Array.from({ length: 4 }, () => rl.hit('a', limit)));
    expect(again.map((d) => d.admitted)).to.deep.equal([true, true, true, false]);
  });

  it('keys are independent', async () => {
    const rl = make();
    const limit = { requests: 1, window_s: 5 };
    expect((await rl.hit('x', limit)).admitted).to.equal(true);
    check?.(rl);
    expect((await rl.hit('x', limit)).admitted).to.equal(false);
    expect((await rl.hit('y', limit)).admitted).to.equal(true);
  });

  it('slides: admissions leave one by one, in the order they came', async () => {
    const rl = make();
    const limit = { requests: 2, window_s: 1 };
    const a = await rl.hit('s', limit);
    await sleep(400);
    const b = await rl.hit('s', limit);
    expect(b.remaining).to.equal(0);
    expect(b.resetAtMs).to.equal(a.resetAtMs); // the oldest counted request decides Reset
    await sleepUntil(a.resetAtMs + 20); // a has left, b has not
    const c = await rl.hit('s', limit);
    expect(c.admitted).to.equal(true);
    expect(c.remaining).to.equal(0);
    const beforeD = Date.now();
    const d = await rl.hit('s', limit);
    expect(d.admitted).to.equal(false);
    expect(c.resetAtMs).to.be.within(a.resetAtMs + 350, a.resetAtMs + 600); // now b is the oldest
    expect(d.retryAfterMs).to.be.within(1, c.resetAtMs - beforeD + 5); // measured when d was asked (a store's round trip later)
  });

  it('a new limit applies at once and keeps the requests already in the window', async () => {
    const rl = make();
    for (let i = 0; i < 3; i++) expect((await rl.hit('p', { requests: 3, window_s: 60 })).admitted).to.equal(true);
    expect((await rl.hit('p', { requests: 3, window_s: 60 })).admitted).to.equal(false);
    const up = await rl.hit('p', { requests: 5, window_s: 60 });
    expect(up).to.include({ admitted: true, remaining: 1, limit: 5 });
    expect((await rl.hit('p', { requests: 5, window_s: 60 })).admitted).to.equal(true);
    expect((await rl.hit('p', { requests: 5, window_s: 60 })).admitted).to.equal(false);
    // down to 2: the window already holds 5
    const down = await rl.hit('p', { requests: 2, window_s: 60 });
    expect(down).to.include({ admitted: false, remaining: 0, limit: 2 });
    // a shorter window lets old requests out
    const shorter = await rl.hit('p', { requests: 2, window_s: 1 });
    expect(shorter.admitted).to.equal(false);
    await sleep(1050);
    expect((await rl.hit('p', { requests: 2, window_s: 1 })).admitted).to.equal(true);
  });
}
