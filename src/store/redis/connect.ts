// One Redis connection per purpose (commands; pub/sub needs a connection of its own), from
// SVC_GATE_REDIS_URL. Commands fail fast while Redis is unreachable (the request that needed them
// answers 5xx) instead of queueing without bound; ioredis reconnects in the background.
import { Redis } from 'ioredis';

export interface RedisLogger {
  warn(obj: object, msg: string): void;
}

/** A connection, not yet connected (connectOrExplain connects it); its errors go to the log, never the URL. */
export function connectRedis(url: string, name: string, log: RedisLogger): Redis {
  const redis = new Redis(url, {
    connectionName: `ttstore-${name}`,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  redis.on('error', (err: Error) => log.warn({ connection: name, error: err.message }, 'Redis connection failed; retrying'));
  return redis;
}

/** Connect, or fail start-up with a message that names the variable. */
export async function connectOrExplain(redis: Redis): Promise<void> {
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new Error(`SVC_GATE_REDIS_URL: cannot reach Redis (${(err as Error).message})`);
  }
}
