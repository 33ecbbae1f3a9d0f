// The run queues and the workers' records against a real redis-server: new entries for a consumer, idle entries
// reclaimed from a cursor, old dead letters trimmed, idle consumers removed but never one holding entries, and a
// worker's hash and index entry written, read back for readiness, and removed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { QUEUE_GROUP, RunQueue, WorkerRegistry } from "../../../src/journal/index.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { acceptTask, liveClient, redisSeconds } from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let queue: RunQueue;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  queue = new RunQueue(f.redis, f.keys);
});
afterAll(async () => {
  await server.stop();
});

/** A consumer's idle time as XINFO CONSUMERS reports it (what removeIdleConsumers compares). */
async function idleMs(name: string): Promise<number> {
  const rows = (await f.redis.call("XINFO", "CONSUMERS", f.keys.queue(0), QUEUE_GROUP)) as string[][];
  for (const row of rows) {
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < row.length; i += 2) fields.set(String(row[i]), String(row[i + 1]));
    if (fields.get("name") === name) return Number(fields.get("idle"));
  }
  return -1;
}

test("readNew gives each entry once, naming its client, profile and context; reclaimIdle hands idle ones over", async () => {
  const clientId = await liveClient(f);
  const first = await acceptTask(f, clientId);
  const second = await acceptTask(f, clientId);
  const read = await queue.readNew("a", [0], 10);
  expect(read.map((e) => e.taskId)).toEqual([first.taskId, second.taskId]);
  expect(read[0]).toMatchObject({ shard: 0, clientId, index: { profile: "echo", contextId: first.contextId } });
  expect(await queue.readNew("b", [0], 10)).toEqual([]);

  // not idle yet: nothing moves; idle past 0 ms: both move to the other consumer, one per call from the cursor
  expect((await queue.reclaimIdle(0, "b", 60_000, "0-0", 10)).entries).toEqual([]);
  const one = await queue.reclaimIdle(0, "b", 0, "0-0", 1);
  expect(one.entries).toEqual(read.slice(0, 1));
  const two = await queue.reclaimIdle(0, "b", 0, one.cursor, 1);
  expect(two.entries).toEqual(read.slice(1, 2));
  const pending = (await f.redis.xpending(f.keys.queue(0), QUEUE_GROUP, "-", "+", 10)) as [string, string][];
  expect(pending.map(([, consumer]) => consumer)).toEqual(["b", "b"]);

  // "a" holds nothing now and is idle: it goes; "b" holds the entries and stays, as does a kept name. Idle means idle
  // past the bound in Redis's own count, which is 0 ms within the millisecond of the consumer's last read: wait for it.
  await waitFor(async () => (await idleMs("a")) > 0, 5000, 'consumer "a" idle past 0 ms');
  expect(await queue.removeIdleConsumers(0, 0, new Set(), 10)).toBe(1);
  await queue.readNew("c", [0], 1);
  expect(await queue.removeIdleConsumers(0, 0, new Set(["c"]), 10)).toBe(0);
  expect(await queue.removeIdleConsumers(1, 0, new Set(), 10)).toBe(0);
});

test("trimDeadLetters drops whole nodes of dead letters older than the bound and keeps newer ones", async () => {
  const dead = f.keys.dead(0);
  const pipeline = f.redis.pipeline();
  for (let i = 0; i < 250; i++) pipeline.xadd(dead, `${1000 + i}-0`, "reason", "old");
  await pipeline.exec();
  const newer = await f.redis.xadd(dead, "*", "reason", "new");
  // MINID ~ trims whole stream nodes (100 entries each by default): the old node that holds the newer entry stays
  expect(await queue.trimDeadLetters(0, Date.now() - 60_000)).toBeGreaterThanOrEqual(200);
  expect((await f.redis.xrange(dead, "-", "+")).map(([id]) => id)).toContain(newer ?? "missing");
});

test("a worker's record and index entry are written with its TTL and removed; readiness reads every shard's beat", async () => {
  const registry = new WorkerRegistry(f.redis, f.keys);
  const record = {
    mode: "consume" as const,
    pid: 7,
    host: "h",
    started: new Date().toISOString(),
    beat: new Date().toISOString(),
    inflight: 1,
    done: 2,
    version: "v",
  };
  await registry.record("w1", record, Date.now(), 30);
  expect(await f.redis.hgetall(f.keys.worker("w1"))).toEqual({ ...record, pid: "7", inflight: "1", done: "2" });
  expect(await f.redis.ttl(f.keys.worker("w1"))).toBeGreaterThan(25);
  expect(await f.redis.zscore(f.keys.workers(), "w1")).not.toBeNull();
  await registry.remove("w1");
  expect(await f.redis.exists(f.keys.worker("w1"))).toBe(0);
  expect(await f.redis.zscore(f.keys.workers(), "w1")).toBeNull();

  const fresh = journalFixture(server);
  const freshRegistry = new WorkerRegistry(fresh.redis, fresh.keys);
  expect((await freshRegistry.shardBeats()).beats).toEqual([null]);
  expect(await freshRegistry.beaten(0)).toBe(false);
  await fresh.ledger.beat(0, 60);
  expect(await freshRegistry.beaten(0)).toBe(true);
  const beaten = await freshRegistry.shardBeats();
  expect(beaten.nowSeconds).toBeGreaterThanOrEqual((await redisSeconds(fresh.redis)) - 1);
  expect(beaten.beats[0]).toBeLessThanOrEqual(beaten.nowSeconds);
  expect(beaten.beats[0]).toBeGreaterThanOrEqual(beaten.nowSeconds - 2);
});
