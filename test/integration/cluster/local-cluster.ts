// A 3-master Redis Cluster of the test file's own on free loopback ports (optionally with a replica per master),
// started and ended with scripts/redis-cluster.sh, and a map of which master serves a key (CLUSTER KEYSLOT and
// CLUSTER SLOTS); a node can be SIGKILLed and started again.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Redis } from "ioredis";

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL("../../../scripts/redis-cluster.sh", import.meta.url));

export interface LocalCluster {
  /** Seed nodes, host:port. */
  readonly nodes: string[];
  /** The master (host:port) that serves `key`'s slot. */
  masterOf(key: string): Promise<string>;
  /** The masters serving slots now (host:port), as CLUSTER SLOTS on a node that answers reports them. */
  masters(): Promise<string[]>;
  /** SIGKILLs one node (host:port). */
  kill(address: string): void;
  /** Starts a killed node again; it rejoins the cluster (as a replica when it was failed over). */
  restart(address: string): Promise<void>;
  /** A plain (non-cluster) connection to one node, closed by stop(). */
  node(address: string): Redis;
  stop(): Promise<void>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A base port whose three ports and their cluster bus ports (+10000) are all free, all below Linux's ephemeral range
 * (32768 up) so that no outgoing connection takes one between this check and the servers' bind.
 */
async function freeBase(nodes: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 2_700);
    const ports = Array.from({ length: nodes }, (_, i) => [base + i, base + i + 10_000]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error("no free ports for a local cluster");
}

type SlotsReply = [number, number, [string, number, ...unknown[]], ...unknown[]][];

/** Starts the cluster on free ports, trying other ports when another process took one meanwhile. */
async function startOnFreePorts(
  replicas: 0 | 1,
  env: NodeJS.ProcessEnv,
): Promise<{ base: number; dir: string; nodes: string[] }> {
  for (let attempt = 1; ; attempt++) {
    const base = await freeBase(replicas === 1 ? 6 : 3);
    const dir = mkdtempSync(join(tmpdir(), "a2a-cluster-"));
    try {
      const started = await run("bash", [SCRIPT, "start", String(base), dir, String(replicas)], { env });
      return { base, dir, nodes: started.stdout.trim().split(",") };
    } catch (error) {
      await run("bash", [SCRIPT, "stop", String(base), dir, String(replicas)]).catch(() => {});
      if (attempt >= 3) throw error;
    }
  }
}

export interface ClusterOptions {
  /** Replicas per master (default 0). */
  replicas?: 0 | 1;
  /** How long a master may be unreachable before its replica takes over, in ms (default 5000). */
  nodeTimeoutMs?: number;
  /**
   * cluster-replica-validity-factor (default 10, Redis's own): a replica whose link to its master has been down longer
   * than this many node timeouts (plus 10 s) does not take over; 0 lets it take over however long the link was down.
   */
  replicaValidityFactor?: number;
}

export async function startCluster(options: ClusterOptions = {}): Promise<LocalCluster> {
  const replicas = options.replicas ?? 0;
  const env = {
    ...process.env,
    CLUSTER_NODE_TIMEOUT_MS: String(options.nodeTimeoutMs ?? 5000),
    CLUSTER_REPLICA_VALIDITY_FACTOR: String(options.replicaValidityFactor ?? 10),
  };
  const { base, dir, nodes } = await startOnFreePorts(replicas, env);
  const connections = new Map<string, Redis>();
  const node = (address: string): Redis => {
    let connection = connections.get(address);
    if (!connection) {
      const [host = "", port = ""] = address.split(":");
      connection = new Redis({ host, port: Number(port), maxRetriesPerRequest: 1 });
      connection.on("error", () => {});
      connections.set(address, connection);
    }
    return connection;
  };
  return {
    nodes,
    node,
    async masterOf(key) {
      const seed = node(nodes[0] ?? "");
      const slot = Number(await seed.call("CLUSTER", "KEYSLOT", key));
      const ranges = (await seed.call("CLUSTER", "SLOTS")) as SlotsReply;
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      if (!range) throw new Error(`no master serves slot ${slot}`);
      return `${range[2][0]}:${range[2][1]}`;
    },
    async masters() {
      for (const address of nodes) {
        const ranges = (await node(address)
          .call("CLUSTER", "SLOTS")
          .catch(() => undefined)) as SlotsReply | undefined;
        if (ranges) return [...new Set(ranges.map((range) => `${range[2][0]}:${range[2][1]}`))].sort();
      }
      throw new Error("no node of the cluster answers");
    },
    kill(address) {
      const port = address.split(":")[1] ?? "";
      process.kill(Number(readFileSync(join(dir, port, "redis.pid"), "utf8").trim()), "SIGKILL");
    },
    async restart(address) {
      await run("bash", [SCRIPT, "restart", address.split(":")[1] ?? "", dir, String(replicas)], { env });
    },
    async stop() {
      for (const connection of connections.values()) connection.disconnect();
      await run("bash", [SCRIPT, "stop", String(base), dir, String(replicas)]);
    },
  };
}
