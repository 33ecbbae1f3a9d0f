// Heartbeats read with the real redis-cli, exactly as docs/operations.md tells operators, and `status` output and
// exit codes: workers live, none live, only sweep ticks, minimum not met.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  cleanup,
  type Installation,
  installation,
  isRunning,
  killStarted,
  liveWorkers,
  runCli,
  startCli,
  waitFor,
  workers,
} from "./harness.ts";

let server: TestRedis;
const installs: Installation[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  killStarted();
  for (const inst of installs) cleanup(inst);
  await server.stop();
});

async function fresh(env: Record<string, string> = {}): Promise<Installation> {
  const inst = await installation(server, { env });
  installs.push(inst);
  return inst;
}

/** The `redis-cli` lines of the first sh block under "## Heartbeats" in docs/operations.md. */
function documentedRecipes(): string[] {
  const doc = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("## Heartbeats"));
  const block = section.slice(section.indexOf("```sh") + 5, section.indexOf("```", section.indexOf("```sh") + 5));
  return block.split("\n").filter((line) => line.startsWith("redis-cli "));
}

/** Runs a documented line through sh, pointed at the test's server and key prefix, as an operator would. */
function redisCli(line: string, inst: Installation, workerId: string): string[] {
  const { port } = new URL(server.url);
  const command = line
    .replace(/^redis-cli /, `redis-cli -h 127.0.0.1 -p ${port} `)
    .replaceAll("a2a:", inst.f.prefix)
    .replaceAll("<id>", workerId);
  const result = spawnSync("sh", ["-c", command], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  return result.stdout.trimEnd().split("\n");
}

function pairs(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < lines.length; i += 2) out[lines[i] as string] = lines[i + 1] as string;
  return out;
}

test("the heartbeat read with the real redis-cli, line by line as documented", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"]);
  const [actor] = await waitFor(async () => {
    const found = await workers(inst);
    return found.length === 1 ? found : undefined;
  }, 10_000);
  if (!actor) throw new Error("no actor");
  const recipes = documentedRecipes();
  const run = (needle: string) => {
    const line = recipes.find((candidate) => candidate.includes(needle));
    if (!line) throw new Error(`docs/operations.md has no recipe with ${needle}`);
    return redisCli(line, inst, actor.id);
  };
  expect(recipes).toHaveLength(7);

  const [id, score] = run("ZRANGE");
  expect(id).toBe(actor.id);
  expect(Math.abs(Number(score) - Date.now())).toBeLessThan(5000);

  const beat = pairs(run("HGETALL"));
  expect(Object.keys(beat).sort()).toEqual(["beat", "done", "host", "inflight", "mode", "pid", "started", "version"]);
  expect(beat).toMatchObject({ mode: "consume", pid: String(actor.pid), inflight: "0", done: "0", version: "0.1.0" });
  expect(isRunning(Number(beat.pid))).toBe(true);
  expect(Date.now() - Date.parse(beat.beat ?? "")).toBeLessThan(3000);

  const ttl = Number(run("TTL")[0]);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(5); // max(3 × heartbeat 1 s, liveness 5 s)
  expect(Math.abs(Number(run("redis-cli GET")[0]) - Date.now() / 1000)).toBeLessThan(5);

  await accept(inst, "[sleep 1500] counted");
  await waitFor(async () => pairs(run("HGETALL")).inflight === "1", 5000, "inflight 1");
  expect(Number(run("XLEN 'a2a:{0}:queue'")[0])).toBe(1);
  expect(run("XPENDING")[0]).toBe("1");
  await waitFor(async () => pairs(run("HGETALL")).done === "1", 8000, "done 1");
  expect(Number(run("XLEN 'a2a:{0}:queue'")[0])).toBe(0);
  expect(run("XPENDING")[0]).toBe("0");
  expect(Number(run("XLEN 'a2a:{0}:dead'")[0])).toBe(0);

  work.child.kill("SIGTERM");
  await work.exited;
  expect(run("HGETALL")).toEqual([""]); // a clean exit removes the heartbeat
}, 30_000);

describe("status", () => {
  test("workers live: table and JSON, exit 0; minimum not met: exit 2", async () => {
    const inst = await fresh();
    const work = startCli(inst, ["work", "--actors", "2"]);
    await liveWorkers(inst, 2);
    // The run outlasts the status commands below, which start slowly on a loaded machine; `running` is the queue
    // group's pending entries, so wait until an actor has taken it.
    await accept(inst, "[sleep 10000] busy");
    const group = async () => (await inst.f.redis.xinfo("GROUPS", inst.f.keys.queue(0))) as unknown[][];
    await waitFor(async () => (await group())[0]?.[5] === 1, 10_000, "the run to be taken");

    const table = await runCli(inst, ["status"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^WORKER\s+MODE\s+PID\s+HOST\s+LAST BEAT\s+LIVE\s+IN FLIGHT\s+DONE\s+VERSION$/m);
    expect(table.stdout.match(/\bconsume\b.*\byes\b/g)).toHaveLength(2);
    expect(table.stdout).toContain("live workers: 2 (2 consumers, 0 sweeps; liveness 5s) - minimum 1: OK");

    const json = await runCli(inst, ["status", "--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({
      liveConsumers: 2,
      liveSweeps: 0,
      queueDepth: 0,
      running: 1,
      deadLetters: 0,
      ok: true,
    });
    expect(report.workers.map((w: { mode: string; live: boolean }) => [w.mode, w.live])).toEqual([
      ["consume", true],
      ["consume", true],
    ]);

    const below = await runCli(inst, ["status", "--minimum-workers", "3"]);
    expect(below.code).toBe(2);
    expect(below.stdout).toContain("minimum 3: BELOW MINIMUM");
    work.child.kill("SIGTERM");
    await work.exited;
  }, 60_000);

  test("none live: exit 2, unless --minimum-workers 0; queue figures show what waits", async () => {
    const inst = await fresh({ A2A_WORKER_LEASE_SECONDS: "1" });
    // A stale beat lets accept queue a run that no worker takes; then one run is taken and abandoned.
    await inst.f.ledger.beat(0, 60);
    await inst.f.ledger.ensureGroup(0);
    await accept(inst, "taken and abandoned");
    await accept(inst, "waits");
    const queue = inst.f.keys.queue(0);
    const taken = (await inst.f.redis.xreadgroup("GROUP", "actors", "gone", "COUNT", 1, "STREAMS", queue, ">")) as [
      string,
      [string, string[]][],
    ][];
    const [entryId] = taken[0]?.[1][0] ?? [];
    await inst.f.ledger.deadLetter(0, "0-1", "r", "t", "for the count");
    await Bun.sleep(1100); // past the 1 s lease: the taken entry's lease has expired

    const none = await runCli(inst, ["status"]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain("workers: none has a heartbeat");
    expect(none.stdout).toMatch(/^queued\s+1$/m);
    expect(none.stdout).toMatch(/^oldest queued\s+\d+s$/m);
    expect(none.stdout).toMatch(/^running\s+1$/m);
    expect(none.stdout).toMatch(/^expired leases\s+1$/m);
    expect(none.stdout).toMatch(/^dead letters\s+1$/m);
    expect(none.stdout).toContain("live workers: 0 (0 consumers, 0 sweeps; liveness 5s) - minimum 1: BELOW MINIMUM");
    expect(entryId).toBeDefined();

    const zero = await runCli(inst, ["status", "--json", "--minimum-workers", "0"]);
    expect(zero.code).toBe(0);
    expect(JSON.parse(zero.stdout)).toMatchObject({
      workers: [],
      queueDepth: 1,
      running: 1,
      expiredLeases: 1,
      ok: true,
    });
  }, 30_000);

  test("only sweep ticks: a sweep counts as a live worker", async () => {
    // The tick's heartbeat must outlive the three CLI runs after it, however slowly a loaded machine starts them.
    const inst = await fresh({ A2A_WORKER_LIVENESS_SECONDS: "120" });
    expect((await runCli(inst, ["status"])).code).toBe(2);
    expect((await runCli(inst, ["sweep", "--once"])).code).toBe(0);
    const status = await runCli(inst, ["status", "--json"]);
    expect(status.code).toBe(0);
    const report = JSON.parse(status.stdout);
    expect(report).toMatchObject({ liveConsumers: 0, liveSweeps: 1, ok: true });
    expect(report.workers[0].id).toMatch(/^sweep-/);
    const table = await runCli(inst, ["status"]);
    expect(table.stdout).toMatch(/^sweep-\S+\s+sweep\s+\d+\s+\S+\s+\d+s ago\s+yes/m);
    expect(table.stdout).toContain("(0 consumers, 1 sweeps;");
  }, 30_000);
});
