// The Redis rate windows keep the in-process limiter's contract (test/helpers/rate-window-contract.ts).
import { randomBytes } from 'node:crypto';
import { connectOrExplain, connectRedis } from '../src/store/redis/connect.js';
import { RedisRateWindows } from '../src/store/redis/rate-windows.js';
import { slidingWindowContract } from '../test/helpers/rate-window-contract.js';
import { clusterEnv } from './env.js';

describe('cluster: rate windows in Redis (one Lua script per request)', () => {
  const redis = connectRedis(clusterEnv().redisUrl, 'test', { warn: () => undefined });
  before(() => connectOrExplain(redis));
  after(() => redis.disconnect());
  // a fresh key prefix per test: nothing left in Redis by an earlier run counts
  slidingWindowContract(() => new RedisRateWindows(redis, `ttstore-test:${randomBytes(4).toString('hex')}:`));
});
