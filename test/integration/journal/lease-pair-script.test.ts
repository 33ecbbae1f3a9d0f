// The leasePair-2 script against a real Redis, as a stream's task and client sets use it: both leases or neither, each
// documented return, renewal of a held member at the limit, expired leases (a dead gateway's) dropped before
// counting, and sets that outlive leases.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { LEASE_PAIR } from "../../../src/journal/lua/lease-pair.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";

let server: TestRedis;
let f: JournalFixture;

beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
});

afterAll(async () => {
  await server.stop();
});

const taskSet = (task: string) => f.keys.taskStreams(0, task);
const clientSet = (client: string) => f.keys.clientStreams(0, client);

function lease(task: string, client: string, member: string, ttlMs: number, maxTask: number, maxClient: number) {
  return LEASE_PAIR.run(
    f.redis,
    { first: taskSet(task), second: clientSet(client) },
    { member, ttlMs, maxFirst: maxTask, maxSecond: maxClient },
  );
}

test("1: both leases are taken, with TTLs on both sets; a held member is renewed even at the limits", async () => {
  expect(await lease("T1", "C1", "g:1", 10_000, 1, 1)).toBe("held");
  expect(await f.redis.zrange(taskSet("T1"), 0, -1)).toEqual(["g:1"]);
  expect(await f.redis.zrange(clientSet("C1"), 0, -1)).toEqual(["g:1"]);
  expect(await f.redis.pttl(taskSet("T1"))).toBeGreaterThan(10_000);
  expect(await f.redis.pttl(clientSet("C1"))).toBeGreaterThan(10_000);
  const before = Number(await f.redis.zscore(taskSet("T1"), "g:1"));
  await Bun.sleep(5);
  expect(await lease("T1", "C1", "g:1", 10_000, 1, 1)).toBe("held");
  expect(Number(await f.redis.zscore(taskSet("T1"), "g:1"))).toBeGreaterThan(before);
});

test("-1: the task is at its maximum; neither set is written", async () => {
  expect(await lease("T2", "C2", "g:1", 10_000, 1, 5)).toBe("held");
  expect(await lease("T2", "C3", "g:2", 10_000, 1, 5)).toBe("firstFull");
  expect(await f.redis.zrange(taskSet("T2"), 0, -1)).toEqual(["g:1"]);
  expect(await f.redis.exists(clientSet("C3"))).toBe(0);
});

test("-2: the client is at its maximum; neither set is written", async () => {
  expect(await lease("T3", "C4", "g:1", 10_000, 5, 1)).toBe("held");
  expect(await lease("T4", "C4", "g:2", 10_000, 5, 1)).toBe("secondFull");
  expect(await f.redis.exists(taskSet("T4"))).toBe(0);
  expect(await f.redis.zrange(clientSet("C4"), 0, -1)).toEqual(["g:1"]);
});

test("a maximum of 0 is no maximum; expired leases are dropped before the limits are counted", async () => {
  for (let i = 0; i < 5; i++) expect(await lease("T5", "C5", `g:${i}`, 10_000, 0, 0)).toBe("held");
  expect(await f.redis.zcard(taskSet("T5"))).toBe(5);
  expect(await lease("T6", "C6", "dead:1", 50, 1, 1)).toBe("held");
  await Bun.sleep(80);
  expect(await lease("T6", "C6", "live:1", 10_000, 1, 1)).toBe("held");
  expect(await f.redis.zrange(taskSet("T6"), 0, -1)).toEqual(["live:1"]);
  expect(await f.redis.zrange(clientSet("C6"), 0, -1)).toEqual(["live:1"]);
});

test("expired leases never cause a refusal, however many live ones were taken after them", async () => {
  expect(await lease("T7", "C7", "dead:1", 50, 2, 2)).toBe("held");
  expect(await lease("T7", "C7", "dead:2", 50, 2, 2)).toBe("held");
  await Bun.sleep(80);
  // a set that looks full (two leases, both expired) is pruned and counted again before any refusal
  expect(await lease("T7", "C7", "live:1", 10_000, 2, 2)).toBe("held");
  expect(await lease("T7", "C7", "live:2", 10_000, 2, 2)).toBe("held");
  expect(await lease("T7", "C7", "live:3", 10_000, 2, 2)).toBe("firstFull");
  expect(await f.redis.zrange(taskSet("T7"), 0, -1)).toEqual(["live:1", "live:2"]);
  expect(await f.redis.zrange(clientSet("C7"), 0, -1)).toEqual(["live:1", "live:2"]);
});
