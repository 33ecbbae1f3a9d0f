// Opens one Redis connection for a process: ioredis `Redis` on the single node at redis.url, or ioredis `Cluster` when
// redis.cluster names seed nodes. Callers attach their own error handlers; nothing here logs or reads the environment.
import { Cluster, type ClusterNode, Redis, type RedisOptions } from "ioredis";
import type { RedisConfig } from "../config/index.ts";
import type { RedisLike } from "./scripts.ts";

export interface RedisConnectionOptions {
  /** Retries of one command while the link is down before it fails (ioredis maxRetriesPerRequest; default 2). */
  maxRetriesPerRequest?: number;
  /** Commands issued in one tick leave as one pipeline (per node on a cluster). */
  autoPipelining?: boolean;
}

/** Attempts to reach a cluster's seed nodes before the first `ready`; after that the client retries for ever. */
const CLUSTER_STARTUP_ATTEMPTS = 10;

/** `host:port` (IPv6 in brackets) → a seed node; the schema has checked the form. */
export function parseClusterNode(node: string): ClusterNode {
  const at = node.lastIndexOf(":");
  const host = node.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(node.slice(at + 1)) };
}

/** Username, password and TLS from redis.url: what every node of a cluster shares. */
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

/** True when the connection is a cluster client (its multi-key commands must stay within one slot). */
export function isCluster(redis: RedisLike): redis is Cluster {
  return redis.isCluster;
}

/**
 * A new connection named `connectionName` (shown by CLIENT LIST). On a cluster, a client that has never been ready
 * gives up after a few attempts, so that a command issued at start-up fails instead of waiting for ever; once ready,
 * it reconnects like a single-node client.
 */
export function createRedis(
  config: Pick<RedisConfig, "url" | "cluster">,
  connectionName: string,
  options: RedisConnectionOptions = {},
): RedisLike {
  const maxRetriesPerRequest = options.maxRetriesPerRequest ?? 2;
  const enableAutoPipelining = options.autoPipelining ?? false;
  if (config.cluster.length === 0) {
    return new Redis(config.url, { connectionName, maxRetriesPerRequest, enableAutoPipelining });
  }
  let ready = false;
  const cluster = new Cluster(config.cluster.map(parseClusterNode), {
    redisOptions: { connectionName, maxRetriesPerRequest, ...credentials(config.url) },
    enableAutoPipelining,
    clusterRetryStrategy: (times) => (!ready && times > CLUSTER_STARTUP_ATTEMPTS ? null : Math.min(100 * times, 2000)),
  });
  cluster.once("ready", () => {
    ready = true;
  });
  return cluster;
}
