// Whether the configured Redis answers, asked once before a command starts, so that an unreachable Redis is one
// line naming the URL (its password masked) instead of a client library's retries and stack traces.
import type { Config, RedisConfig } from "../config/index.ts";
import { createRedis } from "../journal/index.ts";
import { CommandError, EXIT_UNAVAILABLE } from "./command-error.ts";

/** How long the probe waits for PING, in ms: a Redis that is up answers at once. */
const PROBE_MS = 3000;

/** The URL as it may be shown: the password replaced by ***. */
export function shownRedisUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password === "") return url;
  parsed.password = "***";
  return parsed.toString();
}

/** The keys that say where Redis is: a URL, a cluster's seed nodes, or Sentinels. */
export type RedisPlace = Pick<RedisConfig, "url" | "cluster"> &
  Partial<Pick<RedisConfig, "sentinels" | "sentinelName" | "sentinelPassword">>;

/** Where the configuration points: the URL, the cluster's seed nodes, or the Sentinels and the primary's name. */
export function redisTarget(redis: RedisPlace): string {
  if (redis.cluster.length > 0) return `the Redis Cluster at ${redis.cluster.join(", ")}`;
  const sentinels = (redis.sentinels ?? []).map((s) => (typeof s === "string" ? s : `${s.host}:${s.port}`));
  if (sentinels.length > 0) {
    return `the primary ${redis.sentinelName ?? "mymaster"} of the Sentinels at ${sentinels.join(", ")}`;
  }
  return shownRedisUrl(redis.url);
}

/** Whether the configuration names a Redis Cluster or Sentinels (then there is no single Redis to embed instead). */
export function isRedisTopology(redis: RedisPlace): boolean {
  return redis.cluster.length > 0 || (redis.sentinels ?? []).length > 0;
}

/** Why the Redis does not answer PING (the first connection error), or undefined when it answers. */
export async function redisProblem(redis: RedisPlace): Promise<string | undefined> {
  const probe = createRedis(redis, "a2a-probe", { maxRetriesPerRequest: 0 });
  let firstError: string | undefined;
  probe.on("error", (error: Error) => {
    firstError ??= error.message;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_MS / 1000} s`)), PROBE_MS);
  });
  try {
    await Promise.race([probe.ping(), late]);
    return undefined;
  } catch (error) {
    return firstError ?? (error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
    probe.disconnect();
  }
}

/** Throws a one-line CommandError when the configured Redis does not answer. */
export async function requireRedis(config: Config): Promise<void> {
  const problem = await redisProblem(config.redis);
  if (problem === undefined) return;
  throw new CommandError(
    `Redis does not answer at ${redisTarget(config.redis)} (${problem}). Start Redis 7, or set REDIS_URL to one ` +
      "that runs.",
    EXIT_UNAVAILABLE,
  );
}
