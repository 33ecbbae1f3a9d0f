// Harness for the actors suite: an installation of its own (key prefix, config file with profiles, a client) on the
// file's redis-server, the real CLI as child processes (`work`, `sweep`, `status`), and polling helpers.
import { afterAll, afterEach, beforeAll } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeTaskFields, type JournalSettings, type TaskRecord } from "../../../src/journal/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";

const CLI = new URL("../../../src/cli.ts", import.meta.url).pathname;

export const ECHO_PROFILE = {
  name: "echo",
  handler: "echo",
  description: "Echoes the text it receives.",
  skill: { id: "echo", name: "Echo", description: "Answers with the text it got." },
};

/** A profile bound to the `faults` handler: [crash], [hang], long [sleep]s, for tests of what they do to workers. */
export const FAULTS_PROFILE = {
  name: "faults",
  handler: "faults",
  description: "Plays faults on request.",
  skill: { id: "faults", name: "Faults", description: "Crashes, hangs and sleeps as instructed." },
};

export interface InstallationOptions {
  profiles?: Record<string, unknown>[];
  /** A2A_* variables on top of the suite's short timings. */
  env?: Record<string, string>;
  journal?: Partial<JournalSettings>;
}

export interface Installation {
  f: JournalFixture;
  dir: string;
  env: Record<string, string>;
  clientId: string;
}

const started = new Set<ChildProcess>();

/** Short timings so that leases expire and heartbeats age within a test's seconds. */
const SUITE_ENV = {
  A2A_WORKER_LEASE_SECONDS: "2",
  A2A_WORKER_HEARTBEAT_SECONDS: "1",
  A2A_WORKER_LIVENESS_SECONDS: "5",
  A2A_WORKER_RECLAIM_INTERVAL_SECONDS: "1",
  A2A_WORKER_DRAIN_SECONDS: "1",
  A2A_LOG_LEVEL: "info",
};

export async function installation(server: TestRedis, options: InstallationOptions = {}): Promise<Installation> {
  const f = journalFixture(server, options.journal ?? {});
  const dir = mkdtempSync(join(tmpdir(), "a2a-actors-"));
  const configFile = join(dir, "config.json");
  // The suites read finished tasks' journals (`events`), which the default (0 s) deletes with the terminal step.
  const profiles = (options.profiles ?? [ECHO_PROFILE]).map((profile) => ({
    journalRetentionSeconds: 600,
    ...profile,
  }));
  writeFileSync(configFile, JSON.stringify({ profiles }));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  Object.assign(env, SUITE_ENV, {
    A2A_CONFIG: configFile,
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: f.prefix,
    ...options.env,
  });
  const { record } = await f.clients.add({ name: "actors-suite" });
  return { f, dir, env, clientId: record.id };
}

export function cleanup(inst: Installation): void {
  rmSync(inst.dir, { recursive: true, force: true });
}

/**
 * A suite's life around its installations: its own redis-server for the file, every process it started killed after
 * each test, the installations' directories removed at the end. Returns the function that makes an installation.
 */
export function installationSuite(): (options?: InstallationOptions) => Promise<Installation> {
  let server: TestRedis | undefined;
  const installs: Installation[] = [];
  beforeAll(async () => {
    server = await startRedis();
  });
  afterEach(() => killStarted());
  afterAll(async () => {
    killStarted();
    for (const inst of installs) cleanup(inst);
    await server?.stop();
  });
  return async (options) => {
    if (!server) throw new Error("installationSuite: no redis-server yet (call it at the top of the test file)");
    const inst = await installation(server, options);
    installs.push(inst);
    return inst;
  };
}

export interface CliProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every line the process tree wrote to stdout and stderr so far. */
  readonly lines: string[];
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Resolves with the first line (past or future) matching `pattern`. */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Starts `bun src/cli.ts <args>` with the installation's environment; `command` replaces `bun src/cli.ts` (e.g. the
 * installed launcher, bin/a2a-runtime).
 */
export function startCli(
  inst: Installation,
  args: string[],
  env: Record<string, string> = {},
  command: string[] = [process.execPath, CLI],
): CliProcess {
  const [file = process.execPath, ...commandArgs] = command;
  const child = spawn(file, [...commandArgs, ...args], {
    env: { ...inst.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
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
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.on("exit", (code, signal) => {
      started.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    pid: child.pid ?? 0,
    lines,
    exited,
    line: (pattern, timeoutMs = 15_000) =>
      waitFor(
        async () => lines.find((line) => pattern.test(line)),
        timeoutMs,
        () => `a line matching ${pattern}; the output so far:\n${lines.slice(-20).join("\n")}`,
      ),
  };
}

/** Runs a CLI command to its end. */
export async function runCli(
  inst: Installation,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; lines: string[] }> {
  const run = startCli(inst, args, env);
  const { code } = await run.exited;
  const stdout = run.lines.filter((line) => !line.startsWith('{"level"')).join("\n");
  return { code, stdout, lines: run.lines };
}

/** Kills every process this harness started that is still running. */
export function killStarted(): void {
  for (const child of started) if (child.pid) process.kill(child.pid, "SIGKILL");
  started.clear();
}

/** Polls `probe` until it yields a value other than undefined/false, or throws after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  what: string | (() => string) = "condition",
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`);
    }
    await Bun.sleep(50);
  }
}

export async function accept(inst: Installation, text: string, profile = "echo"): Promise<string> {
  const accepted = await inst.f.journal.accept({
    clientId: inst.clientId,
    profile,
    profileQuota: 0,
    message: userMessage(text),
  });
  return accepted.taskId;
}

export async function task(inst: Installation, taskId: string): Promise<TaskRecord | undefined> {
  const fields = await inst.f.redis.hgetall(inst.f.keys.task(0, taskId));
  return Object.keys(fields).length === 0 ? undefined : decodeTaskFields(taskId, fields);
}

export async function run(inst: Installation, taskId: string): Promise<Record<string, string>> {
  return await inst.f.redis.hgetall(inst.f.keys.run(0, taskId));
}

/** Waits until the task is in `state` and returns it. */
export async function taskInState(inst: Installation, taskId: string, state: string, timeoutMs = 10_000) {
  return await waitFor(
    async () => {
      const record = await task(inst, taskId);
      return record?.state === state ? record : undefined;
    },
    timeoutMs,
    `task ${taskId} in ${state}`,
  );
}

export interface WorkerBeat {
  id: string;
  mode: string;
  pid: number;
}

/** Workers with a heartbeat hash, read as an operator would (the workers index, then each hash). */
export async function workers(inst: Installation): Promise<WorkerBeat[]> {
  const ids = await inst.f.redis.zrange(inst.f.keys.workers(), 0, -1);
  const found: WorkerBeat[] = [];
  for (const id of ids) {
    const hash = await inst.f.redis.hgetall(inst.f.keys.worker(id));
    if (hash.pid) found.push({ id, mode: hash.mode ?? "", pid: Number(hash.pid) });
  }
  return found;
}

/**
 * Waits until `count` running workers have a heartbeat and every shard has its live key, which the accept script
 * checks (a worker writes its heartbeat hash first and the live keys a round trip later). Returns the workers.
 */
export async function liveWorkers(inst: Installation, count: number, timeoutMs = 15_000): Promise<WorkerBeat[]> {
  return await waitFor(
    async () => {
      const found = (await workers(inst)).filter((w) => isRunning(w.pid));
      if (found.length !== count) return undefined;
      for (let shard = 0; shard < inst.f.keys.shards; shard++)
        if ((await inst.f.redis.exists(inst.f.keys.live(shard))) === 0) return undefined;
      return found;
    },
    timeoutMs,
    `${count} live workers`,
  );
}

/** Whether a process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** Journal events of a task, oldest first. */
export async function events(inst: Installation, taskId: string) {
  return await inst.f.journal.readJournal(inst.clientId, taskId, "0-0");
}
