// Opens the Redis connections of actors and the sweep. Errors are logged by the code that issues commands; the
// connection's own error events are swallowed so that a reconnecting client never crashes the process.
import { Redis } from "ioredis";

export function connectRedis(url: string, name: string): Redis {
  const redis = new Redis(url, { connectionName: `a2a-${name}`, maxRetriesPerRequest: 2 });
  redis.on("error", () => {});
  return redis;
}
