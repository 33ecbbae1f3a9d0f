// Opens one Redis connection for a process: ioredis `Redis` on the single node at redis.url, ioredis' Sentinel mode when
// redis.sentinels names Sentinels (it asks them for the primary and follows failovers), or ioredis `Cluster` when
// redis.cluster names seed nodes. Callers attach their own error handlers; nothing here logs or reads the environment.
import { Cluster, type ClusterNode, Redis, type RedisOptions } from "ioredis";
import type { RedisConfig } from "../config/index.ts";
import { type RedisLike, registerScripts } from "./scripts.ts";

export interface RedisConnectionOptions {
  /** Retries of one command while the link is down before it fails (ioredis maxRetriesPerRequest; default 2). */
  maxRetriesPerRequest?: number;
}

/** Attempts to reach a cluster's seed nodes before the first `ready`; after that the client retries for ever. */
const CLUSTER_STARTUP_ATTEMPTS = 10;

/** `host:port` (IPv6 in brackets) → a seed node; the schema has checked the form. */
export function parseClusterNode(node: string): ClusterNode {
  return parseHostPort(node);
}

function parseHostPort(node: string): { host: string; port: number } {
  const at = node.lastIndexOf(":");
  const host = node.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(node.slice(at + 1)) };
}

/** A Sentinel as the config names it (host:port or {host, port}) → ioredis' form. */
export function parseSentinel(sentinel: string | { host: string; port: number }): { host: string; port: number } {
  return typeof sentinel === "string" ? parseHostPort(sentinel) : { host: sentinel.host, port: sentinel.port };
}

/** Username, password and TLS from redis.url: what every node of a cluster or Sentinel-managed set shares. */
function credentials(url: string): Pick<RedisOptions, "username" | "password" | "tls"> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return {};
  }
  const options: Pick<RedisOptions, "username" | "password" | "tls"> = {};
  if (parsed.username !== "") options.username = decodeURIComponent(parsed.username);
  if (parsed.password !== "") options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === "rediss:") options.tls = {};
  return options;
}

type SentinelKeys = "sentinels" | "sentinelName" | "sentinelPassword";

/** The database number in redis.url's path (redis://host:6379/2 → 2); 0 when it names none. */
function database(url: string): number {
  const path = URL.canParse(url) ? new URL(url).pathname.slice(1) : "";
  return /^\d+$/.test(path) ? Number(path) : 0;
}

/** True when the connection is a cluster client (its multi-key commands must stay within one slot). */
export function isCluster(redis: RedisLike): redis is Cluster {
  return redis.isCluster;
}

/** Where a connection goes: one node (url), Sentinels (sentinels, sentinelName) or a cluster's seed nodes. */
type RedisTarget = Pick<RedisConfig, "url" | "cluster"> & Partial<Pick<RedisConfig, SentinelKeys>>;

/**
 * A new connection named `connectionName` (shown by CLIENT LIST). On a cluster, a client that has never been ready
 * gives up after a few attempts, so that a command issued at start-up fails instead of waiting for ever; once ready,
 * it reconnects like a single-node client.
 */
export function createRedis(
  config: RedisTarget,
  connectionName: string,
  options: RedisConnectionOptions = {},
): RedisLike {
  const redis = openRedis(config, connectionName, options);
  // before any command: a pipeline carries only the scripts registered when it is opened
  registerScripts(redis);
  return redis;
}

function openRedis(config: RedisTarget, connectionName: string, options: RedisConnectionOptions): RedisLike {
  const maxRetriesPerRequest = options.maxRetriesPerRequest ?? 2;
  const sentinels = config.sentinels ?? [];
  if (sentinels.length > 0) {
    return connectedAfterFailover(
      new Redis({
        sentinels: sentinels.map(parseSentinel),
        name: config.sentinelName ?? "mymaster",
        role: "master",
        ...(config.sentinelPassword ? { sentinelPassword: config.sentinelPassword } : {}),
        ...credentials(config.url),
        db: database(config.url),
        // Subscribes to +switch-master on the Sentinels: the client reconnects to the promoted replica at once rather
        // than when its link to the dead primary times out.
        failoverDetector: true,
        // A write that reached a demoted primary (READONLY) did not happen: reconnect to the new one and send it again.
        reconnectOnError: (error) => (error.message.startsWith("READONLY") ? 2 : false),
        connectionName,
        maxRetriesPerRequest,
      }),
    );
  }
  if (config.cluster.length === 0) {
    return new Redis(config.url, { connectionName, maxRetriesPerRequest });
  }
  let ready = false;
  const cluster = new Cluster(config.cluster.map(parseClusterNode), {
    redisOptions: { connectionName, maxRetriesPerRequest, ...credentials(config.url) },
    clusterRetryStrategy: (times) => (!ready && times > CLUSTER_STARTUP_ATTEMPTS ? null : Math.min(100 * times, 2000)),
  });
  cluster.once("ready", () => {
    ready = true;
  });
  return cluster;
}

/** How long a Sentinel-mode client that ended without being closed waits before it connects again, ms. */
const REVIVE_DELAY_MS = 100;

/**
 * A Sentinel-mode client that connects again when it ends without being closed. ioredis can end one for good during a
 * failover: the +switch-master listener of the link that died disconnects the connector while the client already asks
 * a Sentinel for the new primary; that attempt then fails with "Connection is closed." and the client ends instead of
 * retrying (every later command fails at once; the failover scenario saw gateways and actors cut off for good). Its
 * own disconnect() and quit() still close it for good.
 */
function connectedAfterFailover(redis: Redis): Redis {
  let closed = false;
  const disconnect = redis.disconnect.bind(redis);
  redis.disconnect = (reconnect = false) => {
    if (!reconnect) closed = true;
    disconnect(reconnect);
  };
  const quit = redis.quit.bind(redis);
  redis.quit = ((...args: Parameters<typeof quit>) => {
    closed = true;
    return quit(...args);
  }) as typeof redis.quit;
  redis.on("end", () => {
    if (closed) return;
    setTimeout(() => {
      if (!closed && redis.status === "end") redis.connect().catch(() => {});
    }, REVIVE_DELAY_MS);
  });
  return redis;
}

/**
 * SUBSCRIBE once the connection is ready. ioredis writes SUBSCRIBE at once on a connection still in its handshake
 * (Redis counts it among the commands allowed while loading), ahead of the ready check's INFO, which then fails in
 * subscriber mode: the connection retries for ever and never becomes ready. Sentinel mode's longer handshake (the
 * Sentinels first) made that a start-up failure in about one start of five.
 */
export async function subscribeWhenReady(redis: RedisLike, channel: string): Promise<void> {
  if (redis.status !== "ready") {
    await new Promise<void>((resolve, reject) => {
      const ready = () => {
        redis.off("end", ended);
        resolve();
      };
      const ended = () => {
        redis.off("ready", ready);
        reject(new Error("the Redis connection closed before it was ready"));
      };
      redis.once("ready", ready);
      redis.once("end", ended);
    });
  }
  await redis.subscribe(channel);
}
