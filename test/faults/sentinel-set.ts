// A primary, a replica and three Sentinels of the test file's own on free loopback ports (redis-server --sentinel),
// with the Sentinels' own signal of a failover (+switch-master on their pub/sub, which ioredis' Sentinel mode reads).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";
import { freePort, startRedis, type TestRedis } from "../support/redis.ts";

export const SENTINEL_NAME = "primary";

export interface SentinelSet {
  /** Sentinels as host:port. */
  readonly sentinels: string[];
  /** The data servers by port: the first primary and its replica (either may be primary later). */
  readonly servers: Map<number, TestRedis>;
  /** The port of the primary the Sentinels name now. */
  primaryPort(): Promise<number>;
  /** Resolves with the new primary's port at the next +switch-master. Call before the fault. */
  nextSwitch(timeoutMs: number): Promise<number>;
  /** Starts a new replica of the server at `primaryPort`. */
  addReplica(primaryPort: number): Promise<void>;
  /** Resolves once the primary sees `count` replicas online. */
  replicasOnline(count: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

function sentinelConfig(port: number, primaryPort: number): string {
  return [
    `port ${port}`,
    "bind 127.0.0.1",
    "protected-mode no",
    `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primaryPort} 2`,
    // Short, so a CI run sees the failover within seconds: a primary silent for 1 s is down.
    `sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
    // A failed election is tried again after twice this: 10 s, not the 6 minutes of Redis's default.
    `sentinel failover-timeout ${SENTINEL_NAME} 5000`,
    `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
  ].join("\n");
}

/** How many replicas the server at `port` reports online (INFO replication). */
export async function onlineReplicas(redis: Redis): Promise<number> {
  const info = await redis.info("replication");
  return [...info.matchAll(/^slave\d+:.*state=online/gm)].length;
}

export async function startSentinelSet(): Promise<SentinelSet> {
  const primary = await startRedis({ own: true });
  const replica = await startRedis({ replicaOf: primary.port });
  const servers = new Map([
    [primary.port, primary],
    [replica.port, replica],
  ]);
  const dir = mkdtempSync(join(tmpdir(), "a2a-sentinel-"));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const file = join(dir, `sentinel-${i}.conf`);
    writeFileSync(file, sentinelConfig(port, primary.port));
    children.push(spawn("redis-server", [file, "--sentinel"], { stdio: "ignore" }));
    ports.push(port);
  }
  const connections = ports.map((port) => {
    const connection = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1, lazyConnect: false });
    connection.on("error", () => {});
    return connection;
  });
  const [first] = connections as [Redis];
  const primaryPort = async () => {
    const [, port] = (await first.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SENTINEL_NAME)) as [string, string];
    return Number(port);
  };
  const admin = (port: number): Redis => {
    const server = servers.get(port);
    if (!server) throw new Error(`no server on port ${port}`);
    return server.client();
  };
  const set: SentinelSet = {
    sentinels: ports.map((port) => `127.0.0.1:${port}`),
    servers,
    primaryPort,
    async nextSwitch(timeoutMs) {
      const listener = new Redis({ host: "127.0.0.1", port: ports[1] ?? 0, maxRetriesPerRequest: 1 });
      listener.on("error", () => {});
      await listener.subscribe("+switch-master");
      return await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          listener.disconnect();
          reject(new Error(`no +switch-master within ${timeoutMs} ms`));
        }, timeoutMs);
        listener.on("message", (_channel: string, text: string) => {
          // "<name> <old-ip> <old-port> <new-ip> <new-port>"
          const [name, , , , port] = text.split(" ");
          if (name !== SENTINEL_NAME) return;
          clearTimeout(timer);
          listener.disconnect();
          resolve(Number(port));
        });
      });
    },
    async addReplica(port) {
      const server = await startRedis({ replicaOf: port });
      servers.set(server.port, server);
    },
    async replicasOnline(count, timeoutMs) {
      await waitFor(
        async () => (await onlineReplicas(admin(await primaryPort()))) >= count,
        timeoutMs,
        `${count} replica(s) online`,
      );
    },
    async stop() {
      for (const connection of connections) connection.disconnect();
      for (const child of children) child.kill("SIGTERM");
      await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
      for (const server of servers.values()) await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // Every Sentinel must know the replica and the other two before a failover can be agreed on.
  await waitFor(
    async () => {
      for (const connection of connections) {
        const replicas = (await connection.call("SENTINEL", "REPLICAS", SENTINEL_NAME).catch(() => [])) as unknown[];
        const peers = (await connection.call("SENTINEL", "SENTINELS", SENTINEL_NAME).catch(() => [])) as unknown[];
        if (replicas.length < 1 || peers.length < 2) return false;
      }
      return true;
    },
    20_000,
    "the Sentinels knowing the replica and each other",
  );
  await set.replicasOnline(1, 10_000);
  return set;
}
