// CONTRACT.md section 5's sliding window kept in Redis, so that every node counts the same
// admissions. Each tenant has a sorted set of its admissions in the window, scored by Redis's own
// clock (one clock for all nodes); one Lua script per request drops what left the window, keeps the
// newest `limit` (a lowered limit keeps the latest admissions, as the in-process limiter does),
// admits when fewer than `limit` remain, and answers count and oldest. Redis runs a script alone,
// so concurrent requests on any node are decided one at a time. Memory: at most `limit` members
// per tenant, gone `window` after the tenant's last admission.
import type { Redis } from 'ioredis';
import { RateLimiterUnavailable, type RateDecision, type RateLimiter } from '../../gate/rate-limit.js';
import type { RateLimit } from '../../gate/plans.js';

const SCRIPT = `
local key = KEYS[1]
local seqkey = KEYS[2]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
if count > limit then
  redis.call('ZREMRANGEBYRANK', key, 0, count - limit - 1)
  count = limit
end
local admitted = 0
if count < limit then
  local seq = redis.call('INCR', seqkey)
  redis.call('ZADD', key, now, tostring(seq))
  redis.call('PEXPIRE', seqkey, window)
  count = count + 1
  admitted = 1
end
redis.call('PEXPIRE', key, window)
local oldest = now
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if first[2] then oldest = tonumber(first[2]) end
return {admitted, count, oldest, now}
`;

export class RedisRateWindows implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'ttstore:rl:',
  ) {
    redis.defineCommand('ttstoreRateHit', { numberOfKeys: 2, lua: SCRIPT });
  }

  async hit(key: string, limit: RateLimit): Promise<RateDecision> {
    const windowMs = limit.window_s * 1000;
    const run = (this.redis as unknown as { ttstoreRateHit(k: string, s: string, l: number, w: number): Promise<number[]> }).ttstoreRateHit;
    const k = this.prefix + key;
    let reply: number[];
    try {
      reply = await run.call(this.redis, k, `${k}:seq`, limit.requests, windowMs);
    } catch (err) {
      throw new RateLimiterUnavailable(err);
    }
    const [admitted, count, oldest, now] = reply.map(Number) as [number, number, number, number];
    const resetAtMs = oldest + windowMs;
    return {
      admitted: admitted === 1,
      limit: limit.requests,
      windowS: limit.window_s,
      remaining: Math.max(0, limit.requests - count),
      resetAtMs,
      retryAfterMs: admitted === 1 ? 0 : Math.max(1, resetAtMs - now),
    };
  }
}
