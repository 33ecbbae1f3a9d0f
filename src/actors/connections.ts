// Opens the Redis connections of actors and the sweep (one node, or a cluster when redis.cluster is set). Errors are
// logged by the code that issues commands; the connection's own error events are swallowed so that a reconnecting
// client never crashes the process.
import type { RedisConfig } from "../config/index.ts";
import { createRedis, type RedisLike } from "../journal/index.ts";

export function connectRedis(config: Pick<RedisConfig, "url" | "cluster">, name: string): RedisLike {
  const redis = createRedis(config, `a2a-${name}`, { maxRetriesPerRequest: 2 });
  redis.on("error", () => {});
  return redis;
}
