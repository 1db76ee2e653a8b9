// The Redis rate windows keep the in-process limiter's contract (test/helpers/rate-window-contract.ts).
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { connectOrExplain, connectRedis } from '../src/store/redis/connect.js';
import { RedisRateWindows } from '../src/store/redis/rate-windows.js';
import { slidingWindowContract } from '../test/helpers/rate-window-contract.js';
import { clusterEnv } from './env.js';

describe('cluster: rate windows in Redis', () => {
  const redis = connectRedis(clusterEnv().redisUrl, 'test', { warn: () => undefined });
  before(() => connectOrExplain(redis));
  after(() => redis.disconnect());
  // a fresh key prefix per test: nothing left in Redis by an earlier run counts
  slidingWindowContract(() => new RedisRateWindows(redis, `ttstore-test:${randomBytes(4).toString('hex')}:`));
});

describe('cluster: rate windows in Redis, two nodes at once', () => {
  const env = clusterEnv();
  const connections = [0, 1].map((i) => connectRedis(env.redisUrl, `test-node${i}`, { warn: () => undefined }));
  before(() => Promise.all(connections.map((c) => connectOrExplain(c))));
  after(() => connections.forEach((c) => c.disconnect()));

  it("admits exactly the limit of 600 requests sent at once through two nodes, deciding each busy node's requests in a few calls", async () => {
    const prefix = `ttstore-test:${randomBytes(4).toString('hex')}:`;
    let calls = 0;
    const nodes = connections.map((redis) => {
      const limiter = new RedisRateWindows(redis, prefix);
      const r = redis as unknown as { ttstoreRateHits: (...a: unknown[]) => Promise<unknown> };
      const script = r.ttstoreRateHits;
      r.ttstoreRateHits = function (this: unknown, ...a: unknown[]) {
        calls++;
        return script.apply(this, a);
      };
      return limiter;
    });
    const limit = { requests: 250, window_s: 60 };
    const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => nodes[i % 2]!.hit(i % 3 === 0 ? 'other' : 'busy', limit)));
    const busy = decisions.filter((_, i) => i % 3 !== 0);
    const other = decisions.filter((_, i) => i % 3 === 0);
    expect(busy.filter((d) => d.admitted)).to.have.length(250);
    expect(other.filter((d) => d.admitted)).to.have.length(200);
    // Each admission counted once: the remaining counts of the admitted are 249 down to 0, each once.
    expect(
      busy
        .filter((d) => d.admitted)
        .map((d) => d.remaining)
        .sort((a, b) => a - b),
    ).to.deep.equal(Array.from({ length: 250 }, (_, i) => i));
    expect(busy.filter((d) => !d.admitted).every((d) => d.remaining === 0 && d.retryAfterMs > 0)).to.equal(true);
    // 300 requests per node, at most 128 per call: a few calls each, not 600.
    expect(calls).to.be.within(4, 12);
  });
});
