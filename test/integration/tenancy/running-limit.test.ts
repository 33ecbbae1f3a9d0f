// clients.maxRunningTasks through a real gateway and two actor processes: a client that queues many slow runs has at
// most 2 running at once; another client's run starts while they wait; every one of them completes exactly once, on
// its first try; and deferred runs are not read and re-deferred in a loop (the queue sees a few entries per run).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { readStatus } from "../../../src/journal/index.ts";
import { checkInvariants, terminalEvents } from "../../faults/invariants.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { message, rpc } from "../gateway/harness.ts";
import type { Running } from "../multi/installation.ts";
import { type TenancyInstallation, tenancyInstallation } from "./setup.ts";

const SLOW_RUNS = 10;
let server: TestRedis;
let redis: Redis;
let setup: TenancyInstallation;
let gateway: Running & { url: string };

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  setup = await tenancyInstallation(server.url, {}, { A2A_CLIENTS_MAX_RUNNING_TASKS: "2" });
  [gateway] = await Promise.all([setup.inst.gateway(), setup.inst.work("bun", 2)]);
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await server?.stop();
}, 30_000);

/** The `redis-cli` lines of the sh block under "## Per-client bounds" in docs/operations.md, run as an operator would. */
function documentedRecipes(prefix: string, clientId: string): Map<string, string[]> {
  const doc = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("## Per-client bounds"));
  const start = section.indexOf("```sh") + 5;
  const lines = section.slice(start, section.indexOf("```", start)).split("\n");
  const { port } = new URL(server.url);
  const out = new Map<string, string[]>();
  for (const line of lines.filter((l) => l.startsWith("redis-cli "))) {
    const command = line
      .replace(/^redis-cli /, `redis-cli -h 127.0.0.1 -p ${port} `)
      .replaceAll("a2a:", prefix)
      .replaceAll("<clientId>", clientId);
    const result = spawnSync("sh", ["-c", command], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}`);
    out.set(line, result.stdout.trimEnd().split("\n"));
  }
  return out;
}

/** Entries ever added to a stream (XINFO STREAM entries-added, Redis 7). */
async function entriesAdded(key: string): Promise<number> {
  const info = (await redis.call("XINFO", "STREAM", key)) as unknown[];
  return Number(info[info.indexOf("entries-added") + 1]);
}

test("with maxRunningTasks 2, another client's run starts while the first one's wait; each runs exactly once", async () => {
  const { keys } = setup.inst;
  const greedy = await setup.inst.client();
  const other = await setup.inst.client();
  const shard = keys.shardOf(greedy.id);
  const queue = keys.queue(shard);
  const addedBefore = await entriesAdded(queue);

  const ids: string[] = [];
  for (let i = 0; i < SLOW_RUNS; i++) {
    const answer = await rpc(
      gateway.url,
      "SendMessage",
      { message: message(`[sleep 2000] slow ${i}`), configuration: { returnImmediately: true } },
      { key: greedy.key },
    );
    ids.push(answer.body.result.task.id);
  }
  const taskKeys = ids.map((id) => keys.task(shard, id));
  // Sampled the whole time: never more than 2 of the greedy client's runs at once (its running set, its WORKING tasks).
  let sampling = true;
  let mostRunning = 0;
  let mostWorking = 0;
  const sampler = (async () => {
    while (sampling) {
      mostRunning = Math.max(mostRunning, await redis.scard(keys.clientRunning(shard, greedy.id)));
      const states = await Promise.all(taskKeys.map((key) => redis.hget(key, "state")));
      mostWorking = Math.max(mostWorking, states.filter((s) => s === "TASK_STATE_WORKING").length);
      await Bun.sleep(25);
    }
  })();

  // Wait for the signal the claims leave: runs deferred at the limit.
  await waitFor(
    async () => (await redis.zcard(keys.clientDeferred(shard, greedy.id))) >= 1,
    20_000,
    "the greedy client's runs deferred",
  );
  const answer = await rpc(gateway.url, "SendMessage", { message: message("my turn") }, { key: other.key });
  expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  // ... while the greedy client still has runs that have not started (2 at a time, 2 s each: seconds to go)
  const waiting = await Promise.all(taskKeys.map((key) => redis.hget(key, "state")));
  expect(waiting.filter((s) => s === "TASK_STATE_SUBMITTED").length).toBeGreaterThan(0);

  // what `a2a-runtime status` shows meanwhile (read in process; the command prints this report)
  const report = await readStatus(redis, keys, setup.inst.config);
  expect(report.deferredRuns).toBeGreaterThan(0);
  expect(report.deferredClients).toBe(1);
  // ... and with the redis-cli lines docs/operations.md gives (shard 0: one shard here)
  const recipes = [...documentedRecipes(keys.prefix, greedy.id).entries()];
  expect(recipes).toHaveLength(5);
  const output = (needle: string) => recipes.find(([line]) => line.includes(needle))?.[1] ?? [];
  expect(Number(output("HGET")[0])).toBeGreaterThan(0);
  expect(output(":interrupted")).toEqual(["0"]);
  expect(Number(output(":running")[0])).toBeLessThanOrEqual(2);
  expect(Number(output("ZCARD")[0])).toBeGreaterThan(0);
  expect(output("SMEMBERS")).toEqual([greedy.id]);
  const states = await waitFor(
    async () => {
      const now = await Promise.all(taskKeys.map((key) => redis.hget(key, "state")));
      return now.every((s) => s === "TASK_STATE_COMPLETED") && now;
    },
    60_000,
    "every slow run completed",
  );
  sampling = false;
  await sampler;
  expect(states).toHaveLength(SLOW_RUNS);
  expect(mostRunning).toBe(2);
  expect(mostWorking).toBeLessThanOrEqual(2);
  for (const id of ids) {
    // exactly once, on its first try: a deferral costs no attempt and claims nothing
    expect(await terminalEvents(redis, keys.journal(shard, id))).toBe(1);
    expect(await redis.hmget(keys.run(shard, id), "tries", "fence")).toEqual(["1", "1"]);
  }
  // No busy loop: each run added its entry, and a deferred one one more per time it was queued again; re-queues
  // that meet a slot taken meanwhile are bounded by the runs that end, not by time.
  const added = (await entriesAdded(queue)) - addedBefore;
  expect(added).toBeLessThanOrEqual(4 * (SLOW_RUNS + 1));
  expect(await redis.zcard(keys.clientDeferred(shard, greedy.id))).toBe(0);
  const invariants = await checkInvariants(redis, keys.prefix, { stuckAfterMs: 5000, requireSettled: true });
  expect(invariants.violations).toEqual([]);
  console.log(
    `FIGURES ${JSON.stringify({ scenario: "running-limit", runs: SLOW_RUNS + 1, queueEntriesAdded: added, mostRunning })}`,
  );
}, 90_000);
