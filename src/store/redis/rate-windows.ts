// CONTRACT.md section 5's sliding window kept in Redis, so that every node counts the same
// admissions. Each tenant has a sorted set of its admissions in the window, scored by Redis's own
// clock (one clock for all nodes); a Lua script drops what left the window, keeps the newest `limit`
// (a lowered limit keeps the latest admissions, as the in-process limiter does), admits when fewer
// than `limit` remain, and answers count and oldest. Redis runs a script alone, so concurrent
// requests on any node are decided one at a time. Memory: at most `limit` members per tenant, gone
// `window` after the tenant's last admission.
//
// One script call decides a batch: a node has one call in flight, and the requests that arrive
// meanwhile (any tenants) go in the next, decided in arrival order. An idle node's call goes at the end
// of the event loop's turn, with every request that turn read; a busy one's requests share a round
// trip, so Redis is not asked once per request.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterUnavailable, type RateDecision, type RateLimiter } from '../../gate/rate-limit.js';
import type { RateLimit } from '../../gate/plans.js';

/** The most requests one script call decides: Redis runs nothing else while a script runs. */
const BATCH_MAX = 128;

// KEYS: one sorted set per request. ARGV[1]: a prefix unique to this call (members are prefix:i);
// ARGV[2i], ARGV[2i+1]: request i's limit and window (ms). Answers now, then per request admitted,
// count, oldest.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {now}
for i = 1, #KEYS do
  local key = KEYS[i]
  local limit = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  if count > limit then
    redis.call('ZREMRANGEBYRANK', key, 0, count - limit - 1)
    count = limit
  end
  local admitted = 0
  if count < limit then
    redis.call('ZADD', key, now, ARGV[1] .. ':' .. i)
    count = count + 1
    admitted = 1
  end
  redis.call('PEXPIRE', key, window)
  local oldest = now
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if first[2] then oldest = tonumber(first[2]) end
  out[#out + 1] = admitted
  out[#out + 1] = count
  out[#out + 1] = oldest
end
return out
`;

interface Hit {
  key: string;
  limit: RateLimit;
  resolve(d: RateDecision): void;
  reject(err: unknown): void;
}

type RunScript = (numberOfKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;

export class RedisRateWindows implements RateLimiter {
  private queue: Hit[] = [];
  /** A call is scheduled (for the end of this turn of the event loop) or in flight. */
  private busy = false;
  /** Unique to this process; with the call count, names every admission (the members of the sets). */
  private readonly node = randomBytes(6).toString('base64url');
  private calls = 0;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'ttstore:rl:',
  ) {
    redis.defineCommand('ttstoreRateHits', { lua: SCRIPT });
  }

  hit(key: string, limit: RateLimit): Promise<RateDecision> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key: this.prefix + key, limit, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => this.send());
      }
    });
  }

  private send(): void {
    const batch = this.queue.splice(0, BATCH_MAX);
    if (batch.length === 0) {
      this.busy = false;
      return;
    }
    const args: Array<string | number> = [batch.length, ...batch.map((h) => h.key), `${this.node}:${++this.calls}`];
    for (const h of batch) args.push(h.limit.requests, h.limit.window_s * 1000);
    const run = (this.redis as unknown as { ttstoreRateHits: RunScript }).ttstoreRateHits;
    run.apply(this.redis, args as [number, ...Array<string | number>]).then(
      (reply) => {
        const now = Number(reply[0]);
        batch.forEach((h, i) => h.resolve(decision(h.limit, now, reply.slice(1 + 3 * i, 4 + 3 * i).map(Number))));
        this.send();
      },
      (err: unknown) => {
        for (const h of batch) h.reject(new RateLimiterUnavailable(err));
        this.send();
      },
    );
  }
}

function decision(limit: RateLimit, now: number, [admitted, count, oldest]: number[]): RateDecision {
  const windowMs = limit.window_s * 1000;
  const resetAtMs = oldest! + windowMs;
  return {
    admitted: admitted === 1,
    limit: limit.requests,
    windowS: limit.window_s,
    remaining: Math.max(0, limit.requests - count!),
    resetAtMs,
    retryAfterMs: admitted === 1 ? 0 : Math.max(1, resetAtMs - now),
  };
}
