// The `clients` and `gateway` commands as an operator runs them: real child processes against a real Redis.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { ClientRegistry, KeySpace } from "../../../src/journal/index.ts";
import type { AgentCard } from "../../../src/protocol/index.ts";
import { freePort, startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { eventually } from "./harness.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

let server: TestRedis;
let redis: Redis;
let registry: ClientRegistry;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  const prefix = testPrefix();
  registry = new ClientRegistry(redis, new KeySpace(prefix, 1));
  env = {
    ...process.env,
    A2A_REDIS_URL: server.url,
    A2A_REDIS_KEY_PREFIX: prefix,
    A2A_SERVER_HOST: "127.0.0.1",
    A2A_LOG_LEVEL: "error",
  };
});

afterAll(async () => {
  await server.stop();
});

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ["src/cli.ts", ...args], { cwd: ROOT, env, encoding: "utf8" });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

test("clients add prints the key once; list never shows keys; limit and revoke change the record", async () => {
  const added = cli("clients", "add", "--name", "billing", "--profiles", "echo", "--limit", "4", "--json");
  expect(added.status).toBe(0);
  const { id, apiKey, name } = JSON.parse(added.stdout) as { id: string; apiKey: string; name: string };
  expect(name).toBe("billing");
  expect((await registry.authenticate(apiKey))?.id).toBe(id);

  const listed = cli("clients", "list", "--json");
  expect(listed.status).toBe(0);
  expect(listed.stdout).not.toContain(apiKey);
  expect(listed.stdout).not.toContain("keyhash");
  const records = JSON.parse(listed.stdout) as { id: string; profiles: string[]; limit: number }[];
  expect(records).toEqual([expect.objectContaining({ id, name: "billing", profiles: ["echo"], limit: 4 })]);
  const table = cli("clients", "list");
  expect(table.stdout).toContain(id);
  expect(table.stdout).not.toContain(apiKey);

  expect(cli("clients", "limit", id, "9").status).toBe(0);
  expect((await registry.get(id))?.limit).toBe(9);
  expect(cli("clients", "revoke", id).status).toBe(0);
  expect(await registry.authenticate(apiKey)).toBeUndefined();
});

test("clients add, limit and list carry the per-client limits; `default` returns one to the setting", async () => {
  const added = cli(
    "clients",
    "add",
    "--name",
    "tenant",
    "--max-stored-bytes",
    "64MiB",
    "--max-running-tasks",
    "2",
    "--json",
  );
  expect(added.status).toBe(0);
  const { id } = JSON.parse(added.stdout) as { id: string };
  expect(await registry.get(id)).toMatchObject({ maxStoredBytes: 64 * 1024 * 1024, maxRunningTasks: 2 });
  expect((await registry.get(id))?.maxInterruptedTasks).toBeUndefined();

  const limited = cli(
    "clients",
    "limit",
    id,
    "--max-interrupted-tasks",
    "0",
    "--requests-per-second",
    "20",
    "--max-running-tasks",
    "default",
  );
  expect(limited.status).toBe(0);
  expect(limited.stdout).toContain("maxInterruptedTasks none");
  const record = await registry.get(id);
  expect(record).toMatchObject({ maxStoredBytes: 64 * 1024 * 1024, maxInterruptedTasks: 0, requestsPerSecond: 20 });
  expect(record?.maxRunningTasks).toBeUndefined();
  expect(await redis.hget(new KeySpace(env.A2A_REDIS_KEY_PREFIX ?? "", 1).client(0, id), "maxrun")).toBeNull();

  const listed = JSON.parse(cli("clients", "list", "--json").stdout) as Record<string, unknown>[];
  expect(listed.find((r) => r.id === id)).toMatchObject({
    maxStoredBytes: 67_108_864,
    maxInterruptedTasks: 0,
    maxRunningTasks: null,
    requestsPerSecond: 20,
  });
  const line =
    cli("clients", "list")
      .stdout.split("\n")
      .find((l) => l.startsWith(id)) ?? "";
  expect(line.split("\t").slice(3, 8)).toEqual(["none", "67108864", "none", "default", "20"]);

  for (const bad of [
    ["clients", "limit", id],
    ["clients", "limit", id, "--max-stored-bytes", "lots"],
    ["clients", "add", "--name", "x", "--max-running-tasks", "-2"],
  ]) {
    const run = cli(...bad);
    expect(run.status).not.toBe(0);
    expect(run.stderr).not.toBe("");
  }
});

test("an unknown id or profile is a clear error with a non-zero exit code", () => {
  for (const args of [
    ["clients", "revoke", "no-such-id"],
    ["clients", "limit", "no-such-id", "3"],
  ]) {
    const run = cli(...args);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("no client with id no-such-id");
  }
  const badProfile = cli("clients", "add", "--name", "x", "--profiles", "nope");
  expect(badProfile.status).not.toBe(0);
  expect(badProfile.stderr).toContain("unknown profile(s): nope");
  const badLimit = cli("clients", "add", "--name", "x", "--limit", "-1");
  expect(badLimit.status).not.toBe(0);
});

test("gateway serves on --port and exits cleanly on SIGTERM", async () => {
  const port = await freePort();
  const child = spawn(process.execPath, ["src/cli.ts", "gateway", "--port", String(port)], {
    cwd: ROOT,
    env,
    stdio: "ignore",
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    await eventually(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true,
      15_000,
    );
    const card = (await (await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`)).json()) as AgentCard;
    expect(card.supportedInterfaces[0]?.url).toBe(`http://127.0.0.1:${port}/a2a/echo`);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}, 30_000);
