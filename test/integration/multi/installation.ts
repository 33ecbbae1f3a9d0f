// An installation run as operators run it: a config file, the real CLI as child processes (under Bun or Deno) for
// gateways and supervisors, and the test's own connection (one Redis or a cluster) to read what they stored.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Config, loadConfig } from "../../../src/config/index.ts";
import {
  type ClientLimits,
  ClientRegistry,
  createRedis,
  KeySpace,
  type RedisLike,
} from "../../../src/journal/index.ts";
import { testPrefix } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { rpc } from "../gateway/harness.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CLI = join(ROOT, "src/cli.ts");

export type Runtime = "bun" | "deno";

/** The deno binary itself (not npm's node wrapper, which would outlive a signal), or undefined when absent. */
export function denoBinary(): string | undefined {
  const modules = join(ROOT, "node_modules");
  const candidates = [join(modules, "deno", "deno")];
  const scoped = join(modules, "@deno");
  if (existsSync(scoped)) for (const name of readdirSync(scoped)) candidates.push(join(scoped, name, "deno"));
  return candidates.find((path) => existsSync(path) && spawnSync(path, ["--version"]).status === 0);
}

export const ECHO_PROFILE = {
  name: "echo",
  handler: "echo",
  description: "Echoes the text it receives.",
  skill: { id: "echo", name: "Echo", description: "Answers with the text it got." },
};

/** A profile bound to the `faults` handler: [hang], long [sleep]s and huge [chunks], which echo refuses. */
export const FAULTS_PROFILE = {
  name: "faults",
  handler: "faults",
  description: "Plays faults on request.",
  skill: { id: "faults", name: "Faults", description: "Hangs, sleeps and streams as instructed." },
};

export interface InstallationOptions {
  /** One Redis at this URL … */
  redisUrl?: string;
  /** … or a cluster with these seed nodes (host:port). */
  cluster?: readonly string[];
  /** A2A_* variables on top of the short timings below. */
  env?: Record<string, string>;
  /** push.allowHosts of the config file (none by default), e.g. `127.0.0.1:<port>` of a loopback receiver. */
  allowHosts?: readonly string[];
}

export interface Running {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every line the process wrote to stdout and stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<void>;
  /** The first line (past or future) matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

export interface Installation {
  readonly env: Record<string, string>;
  readonly config: Config;
  readonly keys: KeySpace;
  /** The test's own connection, of the same kind as the processes' (a cluster client when `cluster` is set). */
  readonly redis: RedisLike;
  /** A new client record: its id and API key; `limits` are its own values of the per-client limits (0 = none). */
  client(limit?: number, limits?: ClientLimits): Promise<{ id: string; key: string }>;
  /** `a2a-runtime gateway --port <port>` (0, a free one, by default); resolves with its URL once it listens. */
  gateway(runtime?: Runtime, port?: number): Promise<Running & { url: string }>;
  /** `a2a-runtime work --actors N [args]`; resolves once every actor has started consuming. */
  work(runtime?: Runtime, actors?: number, args?: readonly string[]): Promise<Running>;
  /** Runs a CLI command to its end under Bun (e.g. `status --json`): its exit code and the lines that are not logs. */
  cli(args: string[]): Promise<{ code: number | null; stdout: string }>;
  /** Ends every process it started (SIGTERM, then SIGKILL), closes the connection, removes the config. */
  close(): Promise<void>;
}

/** Short timings: leases expire and heartbeats age within a test's seconds. */
const SHORT_TIMINGS = {
  A2A_SERVER_HOST: "127.0.0.1",
  A2A_WORKER_LEASE_SECONDS: "2",
  A2A_WORKER_HEARTBEAT_SECONDS: "1",
  A2A_WORKER_LIVENESS_SECONDS: "5",
  A2A_WORKER_RECLAIM_INTERVAL_SECONDS: "1",
  A2A_WORKER_DRAIN_SECONDS: "1",
  A2A_LOG_LEVEL: "info",
};

function spawnCli(runtime: Runtime, args: string[], env: Record<string, string>): Running {
  const deno = runtime === "deno" ? denoBinary() : undefined;
  if (runtime === "deno" && !deno) throw new Error("deno is not installed (npm ci installs it from package.json)");
  const [command, prefix] = deno ? [deno, ["run", "-A", CLI]] : [process.execPath, [CLI]];
  const child = spawn(command, [...prefix, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let buffer = "";
    stream?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      lines.push(...parts);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    pid: child.pid ?? 0,
    lines,
    exited,
    line: (pattern, timeoutMs = 20_000) =>
      waitFor(
        async () => lines.find((line) => pattern.test(line)),
        timeoutMs,
        () => `a line matching ${pattern} from ${args.join(" ")}; its output so far:\n${lines.slice(-20).join("\n")}`,
      ),
  };
}

async function end(running: Running): Promise<void> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return;
  running.child.kill("SIGTERM");
  const timer = setTimeout(() => running.child.kill("SIGKILL"), 5000);
  await running.exited;
  clearTimeout(timer);
}

export async function installation(options: InstallationOptions): Promise<Installation> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-multi-"));
  const configFile = join(dir, "config.json");
  const push = { allowHosts: options.allowHosts ?? [] };
  writeFileSync(configFile, JSON.stringify({ profiles: [ECHO_PROFILE, FAULTS_PROFILE], push }));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  delete env.REDIS_URL;
  Object.assign(env, SHORT_TIMINGS, {
    A2A_CONFIG: configFile,
    A2A_REDIS_KEY_PREFIX: testPrefix(),
    // With a cluster, redis.url must not matter: it points where nothing listens.
    A2A_REDIS_URL: options.redisUrl ?? "redis://127.0.0.1:1",
    A2A_REDIS_CLUSTER: (options.cluster ?? []).join(","),
    ...options.env,
  });
  const config = loadConfig({ env, file: configFile });
  const keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
  const redis = createRedis(config.redis, "a2a-test", { maxRetriesPerRequest: 1 });
  redis.on("error", () => {});
  const registry = new ClientRegistry(redis, keys);
  const started = new Set<Running>();
  const track = (running: Running) => {
    started.add(running);
    void running.exited.then(() => started.delete(running));
    return running;
  };
  return {
    env,
    config,
    keys,
    redis,
    async client(limit = 0, limits = {}) {
      const { record, apiKey } = await registry.add({ name: "multi", limit, ...limits });
      return { id: record.id, key: apiKey };
    },
    async gateway(runtime = "bun", port = 0) {
      const running = track(spawnCli(runtime, ["gateway", "--port", String(port)], env));
      const listening = await running.line(/"msg":"gateway listening"/);
      const url = /"url":"(http:\/\/[^"]+)"/.exec(listening)?.[1];
      if (!url) throw new Error(`no URL in ${listening}`);
      return Object.assign(running, { url });
    },
    async work(runtime = "bun", actors = 1, args = []) {
      const running = track(spawnCli(runtime, ["work", "--actors", String(actors), ...args], env));
      await waitFor(
        async () => running.lines.filter((line) => /"workerId".*"msg":"actor started"/.test(line)).length >= actors,
        30_000,
        () => `${actors} actors started; the output so far:\n${running.lines.slice(-20).join("\n")}`,
      );
      return running;
    },
    async cli(args) {
      const running = track(spawnCli("bun", args, env));
      await running.exited;
      const stdout = running.lines.filter((line) => !line.startsWith('{"level"')).join("\n");
      return { code: running.child.exitCode, stdout };
    },
    async close() {
      await Promise.all([...started].map(end));
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON-RPC answers
export type TaskJson = any;

/** GetTask through a gateway; throws on a JSON-RPC error. */
export async function getTask(base: string, key: string, id: string, profile = "echo"): Promise<TaskJson> {
  const answer = await rpc(base, "GetTask", { id }, { key, profile });
  if (answer.body?.error) throw new Error(`GetTask ${id}: ${JSON.stringify(answer.body.error)}`);
  return answer.body.result;
}

/** Polls GetTask until the task is in `state`; returns it. */
export async function taskInState(
  base: string,
  key: string,
  id: string,
  state: string,
  timeoutMs = 10_000,
  profile = "echo",
) {
  return await waitFor(
    async () => {
      const task = await getTask(base, key, id, profile);
      return task.status.state === state ? task : undefined;
    },
    timeoutMs,
    `task ${id} in ${state}`,
  );
}

/** The text of a task's artifacts, joined. */
export function artifactText(task: TaskJson): string {
  // biome-ignore lint/suspicious/noExplicitAny: see TaskJson
  return (task.artifacts ?? []).flatMap((a: any) => a.parts.map((p: any) => p.text ?? "")).join("");
}
