// Test harness: one real redis-server per test file, on a free loopback port, stoppable and restartable.
// REDIS_URL points the suite at an existing server instead; testcontainers serves where no binary exists but Docker does.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { ulid } from "ulid";

export interface RedisServerOptions {
  /** e.g. "2mb": with `noeviction`, writes past it fail with OOM. */
  maxmemory?: string;
  /**
   * AOF with `appendfsync always`, so a restart, even after a SIGKILL, keeps every write Redis acknowledged (with
   * `everysec` Redis replies while it postpones writing the AOF behind a slow background fsync, for up to 2 s).
   */
  appendonly?: boolean;
  /** The port of a primary on loopback this server replicates (a redis-server binary is then required). */
  replicaOf?: number;
  /** A server of this harness's own even when REDIS_URL is set (a primary that a replica follows). */
  own?: boolean;
  /** Listen on a Unix socket too (a binary is then required); its URL is `socketUrl`. */
  unixSocket?: boolean;
}

export interface TestRedis {
  readonly url: string;
  /** unix:///…/redis.sock when the server was started with `unixSocket`. */
  readonly socketUrl?: string;
  readonly port: number;
  /** Whether this harness owns the server (and so can stop and restart it). */
  readonly owned: boolean;
  client(): Redis;
  stop(): Promise<void>;
  restart(): Promise<void>;
  kill(): void;
  /** SIGKILL, resolved once the process has exited (its port is free): restart() then loads what the AOF kept. */
  crash(): Promise<void>;
}

/** A free TCP port on loopback, found by binding port 0. */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Redis's clock in ms: the clock the scripts stamp leases and deadlines with. */
export async function redisTimeMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** A key prefix of its own for one test, so tests never see each other's keys. */
export function testPrefix(): string {
  return `t${ulid().toLowerCase()}:`;
}

function hasBinary(name: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${name}`]).status === 0;
}

async function waitForPing(url: string, deadlineMs: number): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on("error", () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch (error) {
      probe.disconnect();
      if (Date.now() > end) throw new Error(`redis-server at ${url} did not answer`, { cause: error });
      await Bun.sleep(25);
    }
  }
}

class OwnedRedis implements TestRedis {
  readonly owned = true;
  readonly url: string;
  readonly socketUrl?: string;
  private process: ChildProcess | undefined;
  private readonly clients = new Set<Redis>();
  private readonly dir: string;

  constructor(
    readonly port: number,
    private readonly options: RedisServerOptions,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
    this.dir = mkdtempSync(join(tmpdir(), "a2a-redis-"));
    if (options.unixSocket) this.socketUrl = `unix://${join(this.dir, "redis.sock")}`;
  }

  async start(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--dir", this.dir];
    // A replica that (re)connects gets its copy at once rather than after the default 5 s wait for more replicas.
    args.push("--repl-diskless-sync-delay", "0");
    args.push("--appendonly", this.options.appendonly ? "yes" : "no");
    if (this.options.appendonly) args.push("--appendfsync", "always");
    if (this.options.maxmemory) args.push("--maxmemory", this.options.maxmemory, "--maxmemory-policy", "noeviction");
    if (this.options.replicaOf !== undefined) args.push("--replicaof", "127.0.0.1", String(this.options.replicaOf));
    if (this.socketUrl) args.push("--unixsocket", new URL(this.socketUrl).pathname, "--unixsocketperm", "700");
    this.process = spawn("redis-server", args, { stdio: "ignore" });
    await waitForPing(this.url, 10_000);
    if (this.socketUrl) await waitForPing(this.socketUrl, 10_000);
  }

  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    this.clients.add(client);
    return client;
  }

  kill(): void {
    this.process?.kill("SIGKILL");
    this.process = undefined;
  }

  async crash(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGKILL");
    await exited;
    this.process = undefined;
  }

  async restart(): Promise<void> {
    await this.halt();
    await this.start();
  }

  private async halt(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
    this.process = undefined;
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    this.clients.clear();
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

class ExternalRedis implements TestRedis {
  readonly owned = false;
  readonly port: number;
  private readonly clients = new Set<Redis>();
  constructor(
    readonly url: string,
    private readonly onStop: () => Promise<void> = async () => {},
  ) {
    this.port = Number(new URL(url).port || 6379);
  }
  client(): Redis {
    const client = new Redis(this.url, { maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    this.clients.add(client);
    return client;
  }
  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    await this.onStop();
  }
  restart(): Promise<void> {
    throw new Error("this Redis is not owned by the test harness (REDIS_URL is set); it cannot be restarted");
  }
  kill(): void {
    throw new Error("this Redis is not owned by the test harness (REDIS_URL is set); it cannot be killed");
  }
  crash(): Promise<void> {
    throw new Error("this Redis is not owned by the test harness (REDIS_URL is set); it cannot be killed");
  }
}

/**
 * Starts a redis-server for one test file. With `options` (maxmemory, AOF) a binary or Docker is required (a binary for
 * `replicaOf` and `unixSocket`);
 * without them, `REDIS_URL` may point the suite at an existing server.
 */
export async function startRedis(options: RedisServerOptions = {}): Promise<TestRedis> {
  const wantsOwn =
    options.maxmemory !== undefined ||
    options.appendonly === true ||
    options.replicaOf !== undefined ||
    options.own === true ||
    options.unixSocket === true;
  const external = process.env.REDIS_URL;
  if (external && !wantsOwn) return new ExternalRedis(external);
  if (hasBinary("redis-server")) {
    const server = new OwnedRedis(await freePort(), options);
    await server.start();
    return server;
  }
  if (hasBinary("docker")) {
    const { GenericContainer } = await import("testcontainers");
    const command = ["redis-server", "--save", ""];
    if (options.maxmemory) command.push("--maxmemory", options.maxmemory, "--maxmemory-policy", "noeviction");
    const container = await new GenericContainer("redis:7").withExposedPorts(6379).withCommand(command).start();
    const url = `redis://127.0.0.1:${container.getMappedPort(6379)}`;
    return new ExternalRedis(url, async () => {
      await container.stop();
    });
  }
  throw new Error("no redis-server on the PATH and no Docker: install redis-server or set REDIS_URL");
}

/** Every key under a prefix, sorted: for comparing the key set before and after a call. */
export async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys.sort();
}
