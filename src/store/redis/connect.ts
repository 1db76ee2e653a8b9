// One Redis connection per purpose (commands; pub/sub needs a connection of its own), from
// SVC_GATE_REDIS_URL. Commands fail fast while Redis is unreachable (the request that needed them
// answers 5xx) instead of queueing without bound; ioredis reconnects in the background.
import { Redis } from 'ioredis';

export function connectRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: `ttstore-${name}`,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}
