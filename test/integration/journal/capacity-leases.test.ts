// The lease script through CapacityLeases against a real redis-server: acquire up to the maximum, refuse at it
// without writing, renew a held lease even at the maximum, and lapse expired leases so they free capacity.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { CapacityLeases } from "../../../src/journal/index.ts";
import { HEARTBEAT } from "../../../src/journal/lua/heartbeat.ts";
import { LEASE } from "../../../src/journal/lua/lease.ts";
import { scriptPipeline } from "../../../src/journal/scripts.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { dumpUnder } from "./helpers.ts";

let server: TestRedis;
let leases: CapacityLeases;
beforeAll(async () => {
  server = await startRedis();
  leases = new CapacityLeases(server.client());
});
afterAll(async () => {
  await server.stop();
});

test("1 up to the maximum, -1 at it with nothing written, and release frees a place", async () => {
  const redis = server.client();
  const prefix = testPrefix();
  const key = `${prefix}waiting`;
  expect(await LEASE.run(redis, { leases: key }, { member: "g1:r1", ttlMs: 30_000, max: 2, renewOnly: "" })).toBe(
    "held",
  );
  expect(await leases.acquire(key, "g1:r2", 30_000, 2)).toBe(true);
  expect(await leases.count(key)).toBe(2);
  const before = await dumpUnder(redis, prefix);
  expect(await LEASE.run(redis, { leases: key }, { member: "g2:r1", ttlMs: 30_000, max: 2, renewOnly: "" })).toBe(
    "full",
  );
  expect(await leases.acquire(key, "g2:r1", 30_000, 2)).toBe(false);
  expect(await dumpUnder(redis, prefix)).toEqual(before);
  await leases.release(key, "g1:r1");
  expect(await leases.acquire(key, "g2:r1", 30_000, 2)).toBe(true);
  expect(await leases.count(key)).toBe(2);
});

test("a held lease is renewed even at the maximum, and its expiry moves forward", async () => {
  const redis = server.client();
  const key = `${testPrefix()}waiting`;
  await leases.acquire(key, "a", 1_000, 2);
  await leases.acquire(key, "b", 1_000, 2);
  const first = Number(await redis.zscore(key, "a"));
  await Bun.sleep(5);
  expect(await leases.acquire(key, "a", 60_000, 2)).toBe(true);
  expect(Number(await redis.zscore(key, "a"))).toBeGreaterThan(first + 50_000);
  expect(await leases.count(key)).toBe(2);
});

test("renew-only renews a live lease and never takes one back: -2 with nothing written when it is gone", async () => {
  const redis = server.client();
  const prefix = testPrefix();
  const key = `${prefix}waiting`;
  await leases.acquire(key, "a", 1_000, 2);
  const before = Number(await redis.zscore(key, "a"));
  expect(await leases.renew(key, "a", 60_000)).toBe(true);
  expect(Number(await redis.zscore(key, "a"))).toBeGreaterThan(before);
  // given back by another writer (the run's end for a blocking request): a renewal must not bring it back
  await redis.zrem(key, "a");
  expect(await LEASE.run(redis, { leases: key }, { member: "a", ttlMs: 60_000, max: 2, renewOnly: "1" })).toBe("gone");
  expect(await leases.renew(key, "b", 60_000)).toBe(false);
  expect(await dumpUnder(redis, prefix)).toEqual({});
});

test("an expired lease (a dead gateway's) frees its capacity; the key lapses when every lease has", async () => {
  const redis = server.client();
  const key = `${testPrefix()}waiting`;
  expect(await leases.acquire(key, "dead-gateway", 40, 1)).toBe(true);
  expect(await leases.acquire(key, "live", 40, 1)).toBe(false);
  await Bun.sleep(50);
  expect(await leases.count(key)).toBe(0);
  expect(await leases.acquire(key, "live", 40, 1)).toBe(true);
  expect(await redis.zrange(key, 0, -1)).toEqual(["live"]);
  await Bun.sleep(150);
  expect(await redis.exists(key)).toBe(0);
});

test("a short lease does not cut the life of a longer one held in the same set", async () => {
  const redis = server.client();
  const key = `${testPrefix()}waiting`;
  expect(await leases.acquire(key, "long", 60_000, 2)).toBe(true);
  expect(await leases.acquire(key, "short", 20, 2)).toBe(true);
  await Bun.sleep(60);
  expect(await leases.count(key)).toBe(1);
  expect(await leases.acquire(key, "third", 60_000, 2)).toBe(true);
  expect(await leases.acquire(key, "fourth", 60_000, 2)).toBe(false);
  expect(await redis.pttl(key)).toBeGreaterThan(60_000);
});

test("scripts queued in one pipeline run in order and decode their own replies, after SCRIPT FLUSH too", async () => {
  const redis = server.client();
  const prefix = testPrefix();
  const leases = `${prefix}leases`;
  for (const flush of [false, true]) {
    if (flush) await redis.script("FLUSH");
    await redis.del(leases);
    const pipeline = scriptPipeline(redis);
    LEASE.queue(pipeline, { leases }, { member: "a", ttlMs: 30_000, max: 1, renewOnly: "" });
    LEASE.queue(pipeline, { leases }, { member: "b", ttlMs: 30_000, max: 1, renewOnly: "" });
    HEARTBEAT.queue(pipeline, { live: `${prefix}live` }, { ttlSeconds: 60 });
    const replies = (await pipeline.exec()) ?? [];
    expect(replies.map(([error]) => error)).toEqual([null, null, null]);
    expect(LEASE.decode(replies[0]?.[1] as number)).toBe("held");
    expect(LEASE.decode(replies[1]?.[1] as number)).toBe("full");
    const [seconds] = await redis.time();
    expect(Math.abs(HEARTBEAT.decode(replies[2]?.[1] as number) - Number(seconds))).toBeLessThanOrEqual(2);
  }
});
