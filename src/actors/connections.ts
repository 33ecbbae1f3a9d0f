// Opens the Redis connections of actors and the sweep (one node, or a cluster when redis.cluster is set). Errors are
// logged by the code that issues commands; the connection's own error events are swallowed so that a reconnecting
// client never crashes the process.
import type { RedisConfig } from "../config/index.ts";
import { createRedis, type RedisLike } from "../journal/index.ts";

export function connectRedis(config: Pick<RedisConfig, "url" | "cluster">, name: string): RedisLike {
  // The actor's command connection carries the scripts of every run in flight: commands issued in one tick leave in
  // one socket write (the blocking queue reads and the cancel subscription have connections of their own).
  const redis = createRedis(config, `a2a-${name}`, { maxRetriesPerRequest: 2, autoPipelining: name === "actor" });
  redis.on("error", () => {});
  return redis;
}
