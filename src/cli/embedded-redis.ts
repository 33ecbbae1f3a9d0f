// For `a2a-runtime start` only: a redis-server of our own on a free loopback port, for a first run on a machine whose
// Redis does not answer. It keeps its data in a temporary folder and stops with the process tree.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface EmbeddedRedis {
  readonly url: string;
  stop(): Promise<void>;
}

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export function redisServerOnPath(): boolean {
  return spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Starts redis-server on 127.0.0.1 with append-only persistence in a temporary folder. */
export async function startEmbeddedRedis(): Promise<EmbeddedRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "a2a-runtime-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes"],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  for (let waited = 0; !(await redisAnswers(url)); waited += 100) {
    if (waited > 10_000 || child.exitCode !== null) throw new Error("the embedded redis-server did not start");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
