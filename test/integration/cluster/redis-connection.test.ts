// redis.cluster and redis.sentinels: how seed nodes and Sentinels are written and checked, and which ioredis client createRedis opens for a config.
import { expect, test } from "bun:test";
import { Cluster } from "ioredis";
import { ConfigError, loadConfig } from "../../../src/config/index.ts";
import { createRedis, isCluster, parseClusterNode, parseSentinel } from "../../../src/journal/index.ts";

test("seed nodes are host:port, IPv6 in brackets", () => {
  expect(parseClusterNode("127.0.0.1:7000")).toEqual({ host: "127.0.0.1", port: 7000 });
  expect(parseClusterNode("redis-a.internal:6379")).toEqual({ host: "redis-a.internal", port: 6379 });
  expect(parseClusterNode("[::1]:7001")).toEqual({ host: "::1", port: 7001 });
});

test("A2A_REDIS_CLUSTER is a comma-separated list; a node without a port is refused by name", () => {
  const config = loadConfig({ env: { A2A_REDIS_CLUSTER: "127.0.0.1:7000, [::1]:7001,," } });
  expect(config.redis.cluster).toEqual(["127.0.0.1:7000", "[::1]:7001"]);
  expect(loadConfig({ env: {} }).redis.cluster).toEqual([]);
  expect(() => loadConfig({ env: { A2A_REDIS_CLUSTER: "127.0.0.1" } })).toThrow(ConfigError);
  expect(() => loadConfig({ env: { A2A_REDIS_CLUSTER: "127.0.0.1" } })).toThrow(/redis\.cluster.*host:port/s);
});

test("one node without redis.cluster, a cluster client with it, sharing redis.url's credentials and TLS", () => {
  const single = createRedis({ url: "redis://127.0.0.1:1", cluster: [] }, "a2a-test");
  single.on("error", () => {});
  expect(isCluster(single)).toBe(false);
  single.disconnect();

  const cluster = createRedis(
    { url: "rediss://app:s3cret@127.0.0.1:1", cluster: ["127.0.0.1:1", "127.0.0.1:2"] },
    "a2a-test",
    { maxRetriesPerRequest: 1 },
  );
  cluster.on("error", () => {});
  expect(cluster).toBeInstanceOf(Cluster);
  if (!isCluster(cluster)) throw new Error("not a cluster client");
  expect(cluster.options.redisOptions).toMatchObject({
    connectionName: "a2a-test",
    maxRetriesPerRequest: 1,
    username: "app",
    password: "s3cret",
    tls: {},
  });
  cluster.disconnect();
});

test("a cluster that never answers fails a command instead of queueing it for ever", async () => {
  const cluster = createRedis({ url: "redis://127.0.0.1:1", cluster: ["127.0.0.1:1"] }, "a2a-test");
  cluster.on("error", () => {});
  await expect(cluster.ping()).rejects.toThrow(/startup nodes/);
  cluster.disconnect();
}, 20_000);

test("redis.sentinels: host:port strings (env) or {host, port} objects; not together with redis.cluster", () => {
  const config = loadConfig({
    env: { A2A_REDIS_SENTINELS: "127.0.0.1:26379, [::1]:26380", A2A_REDIS_SENTINEL_NAME: "primary" },
  });
  expect(config.redis.sentinels.map(parseSentinel)).toEqual([
    { host: "127.0.0.1", port: 26379 },
    { host: "::1", port: 26380 },
  ]);
  expect(config.redis.sentinelName).toBe("primary");
  expect(parseSentinel({ host: "sentinel-a", port: 26379 })).toEqual({ host: "sentinel-a", port: 26379 });
  expect(() => loadConfig({ env: { A2A_REDIS_SENTINELS: "127.0.0.1" } })).toThrow(/redis\.sentinels/);
  const both = { A2A_REDIS_SENTINELS: "127.0.0.1:26379", A2A_REDIS_CLUSTER: "127.0.0.1:7000" };
  expect(() => loadConfig({ env: both })).toThrow(/redis\.sentinels.*redis\.cluster/s);
});

test("with redis.sentinels the client runs in ioredis' Sentinel mode, with redis.url's credentials and database", () => {
  const redis = createRedis(
    {
      url: "redis://app:s3cret@ignored:6379/3",
      cluster: [],
      sentinels: ["127.0.0.1:1", { host: "127.0.0.1", port: 2 }],
      sentinelName: "primary",
      sentinelPassword: "watch",
    },
    "a2a-test",
    { maxRetriesPerRequest: 1 },
  );
  redis.on("error", () => {});
  expect(isCluster(redis)).toBe(false);
  if (isCluster(redis)) throw new Error("a cluster client");
  expect(redis.options).toMatchObject({
    sentinels: [
      { host: "127.0.0.1", port: 1 },
      { host: "127.0.0.1", port: 2 },
    ],
    name: "primary",
    role: "master",
    sentinelPassword: "watch",
    username: "app",
    password: "s3cret",
    db: 3,
    failoverDetector: true,
    connectionName: "a2a-test",
  });
  redis.disconnect();
});
