// A bench installation: its own key prefix and config file (profiles `echo` and `noop`) on the bench's redis-server,
// a client with an API key, and the real CLI (`bun src/cli.ts gateway|work`) started as child processes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { PURGE_DELAY_DEFAULT, PURGE_DELAY_VARIABLE } from "../../src/allocator.ts";
import { ClientRegistry, KeySpace } from "../../src/journal/index.ts";
import { freePort } from "../support/redis.ts";
import { type Child, startChild, waitFor } from "./processes.ts";

let prefixes = 0;

/**
 * A key prefix as long as the default `a2a:` (plus a counter), unique within the bench run (whose redis-server is its
 * own): every key a script call carries is as long as in an installation on its defaults.
 */
export function benchPrefix(): string {
  prefixes += 1;
  return `a2a${prefixes}:`;
}

export const CLI = new URL("../../src/cli.ts", import.meta.url).pathname;
export const BUN = process.execPath;

function profile(name: string, handler: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name,
    handler,
    description: `The ${name} agent (benchmarks).`,
    skill: { id: name, name, description: `${name} for benchmarks.` },
    ...extra,
  };
}

export interface InstallationOptions {
  /** A2A_* variables for every process of the installation. */
  env?: Record<string, string>;
  /** Extra fields of every profile (retention, quotas). */
  profileFields?: Record<string, unknown>;
  /** More profiles, name → handler, besides `echo` and `noop`. */
  profiles?: Record<string, string>;
  /** A handler module that `work` loads besides the built-ins (`--handlers`). */
  handlers?: string;
}

export class Installation {
  readonly prefix = benchPrefix();
  readonly keys = new KeySpace(this.prefix, 1);
  readonly redis: Redis;
  readonly env: Record<string, string>;
  private readonly dir = mkdtempSync(join(tmpdir(), "a2a-bench-"));
  private readonly handlers: string[];
  clientId = "";
  apiKey = "";

  constructor(
    readonly redisUrl: string,
    options: InstallationOptions = {},
  ) {
    this.redis = new Redis(redisUrl);
    const configFile = join(this.dir, "config.json");
    const extra = options.profileFields ?? {};
    const profiles = { echo: "echo", noop: "noop", ...options.profiles };
    const list = Object.entries(profiles).map(([name, handler]) => profile(name, handler, extra));
    writeFileSync(configFile, JSON.stringify({ profiles: list }));
    this.handlers = options.handlers ? ["--handlers", options.handlers] : [];
    this.env = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      A2A_CONFIG: configFile,
      A2A_REDIS_URL: redisUrl,
      A2A_REDIS_KEY_PREFIX: this.prefix,
      A2A_SERVER_HOST: "127.0.0.1",
      A2A_LOG_LEVEL: "warn",
      // One client is the whole load of every scenario: the per-client bounds would measure that client, not the
      // installation (its running runs capped, its stored bytes refused past 256 MiB).
      A2A_CLIENTS_MAX_RUNNING_TASKS: "0",
      A2A_CLIENTS_MAX_STORED_BYTES: "0",
      // as bin/a2a-runtime starts every process (the bench runs src/cli.ts itself, for its runtime flags)
      [PURGE_DELAY_VARIABLE]: PURGE_DELAY_DEFAULT,
      ...options.env,
    };
  }

  /** Creates the installation's client (no limit, every profile) and remembers its API key. */
  async addClient(): Promise<void> {
    const { record, apiKey } = await new ClientRegistry(this.redis, this.keys).add({ name: "bench" });
    this.clientId = record.id;
    this.apiKey = apiKey;
  }

  /**
   * Starts `bun [bunArgs] src/cli.ts gateway --port <free>` and waits until it answers /healthz. `cli` runs another
   * checkout's entry instead (before/after comparisons of a change).
   */
  async gateway(bunArgs: string[] = [], cli = CLI): Promise<{ child: Child; port: number }> {
    const port = await freePort();
    const child = startChild("gateway", [BUN, ...bunArgs, cli, "gateway", "--port", String(port)], this.env);
    await waitFor(
      async () => {
        if (child.process.exitCode !== null) throw new Error(`gateway exited:\n${child.lines.join("\n")}`);
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        return ok ? true : undefined;
      },
      20_000,
      "the gateway to answer /healthz",
      50,
    );
    return { child, port };
  }

  /** Starts `bun src/cli.ts work --actors N` and waits until every actor has beaten once. */
  async work(actors: number, env: Record<string, string> = {}): Promise<Child> {
    const before = await this.redis.zcard(this.keys.workers());
    const command = [BUN, CLI, "work", "--actors", String(actors), ...this.handlers];
    const child = startChild("work", command, { ...this.env, ...env });
    await waitFor(
      async () => {
        if (child.process.exitCode !== null) throw new Error(`work exited:\n${child.lines.join("\n")}`);
        return (await this.redis.zcard(this.keys.workers())) >= before + actors ? true : undefined;
      },
      20_000,
      `${actors} actors to beat`,
      50,
    );
    return child;
  }

  /** Seeds a live worker beat in Redis time (what an actor's heartbeat writes), valid for `seconds`. */
  async seedLiveBeat(seconds = 3600): Promise<void> {
    const [now] = await this.redis.time();
    await this.redis.set(this.keys.live(0), String(now), "EX", seconds);
  }

  /** Queued + running tasks of the installation's client. */
  active(): Promise<number> {
    return this.redis.scard(this.keys.clientActive(0, this.clientId));
  }

  /** Deletes every key under the prefix (so that one scenario's keys do not weigh on the next). */
  async wipe(): Promise<void> {
    let cursor = "0";
    do {
      const [next, batch] = await this.redis.scan(cursor, "MATCH", `${this.prefix}*`, "COUNT", 5000);
      cursor = next;
      if (batch.length > 0) await this.redis.unlink(...batch);
    } while (cursor !== "0");
  }

  async close(): Promise<void> {
    await this.wipe().catch(() => {});
    this.redis.disconnect();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The JSON-RPC body of a SendMessage with a fresh messageId. */
export function sendMessageBody(seq: number, text: string, returnImmediately: boolean, tag: string): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: seq,
    method: "SendMessage",
    params: {
      message: { messageId: `${tag}-${seq}`, role: "ROLE_USER", parts: [{ text }] },
      configuration: { returnImmediately },
    },
  });
}
