// What a node shares through Redis (SVC_GATE_REDIS_URL): the rate-limit windows and the change bus,
// over a command connection and a pub/sub connection. src/server.ts loads this module only when the
// variable is set, so a single node never loads a Redis client.
import { RedisBus, type BusLogger } from './bus.js';
import { connectOrExplain, connectRedis, type RedisLogger } from './connect.js';
import { RedisRateWindows } from './rate-windows.js';

export interface SharedThroughRedis {
  limiter: RedisRateWindows;
  bus: RedisBus;
  close(): Promise<void>;
}

export async function openRedis(url: string, log: BusLogger & RedisLogger): Promise<SharedThroughRedis> {
  const redis = connectRedis(url, 'commands', log);
  const bus = new RedisBus(redis, connectRedis(url, 'bus', log), log);
  await connectOrExplain(redis);
  return {
    limiter: new RedisRateWindows(redis),
    bus,
    close: async () => {
      await bus.close();
      redis.disconnect();
    },
  };
}
