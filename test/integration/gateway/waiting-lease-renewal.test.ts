// A gateway renews the waiting leases it holds and never takes one back: the run's end of a task whose accept took a
// blocking request's leases gives them back before the gateway hears of it, and a renewal in between must not bring
// them back (they would count against the limits until their TTL).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { WaitingLeases } from "../../../src/gateway/index.ts";
import { CapacityLeases, KeySpace } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test("a renewal renews the leases still held and does not bring back one given back by another writer", async () => {
  const redis = server.client();
  const keys = new KeySpace(testPrefix(), 1);
  // renewed every 100 ms
  const waiting = new WaitingLeases({
    leases: new CapacityLeases(redis),
    keys,
    gatewayId: "gw",
    max: 10,
    maxPerClient: 5,
    ttlMs: 300,
    logger: createLogger("test", "silent"),
  });
  expect(await waiting.acquire("r1", "client-1")).toBeUndefined();
  expect(await waiting.acquire("r2", "client-1")).toBeUndefined();
  const clientKey = keys.clientWaiting(keys.shardOf("client-1"), "client-1");
  // what the run's end does for r1's request
  await redis.zrem(keys.waiting(), "gw:r1");
  await redis.zrem(clientKey, "gw:r1");
  // two renewals of r2 (its expiry moved twice), so at least one renewal ran after the removal
  let score = Number(await redis.zscore(keys.waiting(), "gw:r2"));
  const deadline = Date.now() + 10_000;
  for (let renewals = 0; renewals < 2; ) {
    if (Date.now() > deadline) throw new Error("the leases were not renewed");
    const now = Number(await redis.zscore(keys.waiting(), "gw:r2"));
    if (now > score) {
      renewals += 1;
      score = now;
    }
    await Bun.sleep(20);
  }
  expect(await redis.zscore(keys.waiting(), "gw:r1")).toBeNull();
  expect(await redis.zscore(clientKey, "gw:r1")).toBeNull();
  expect(await redis.zscore(clientKey, "gw:r2")).not.toBeNull();
  waiting.forget("r1");
  expect(waiting.size).toBe(1);
  await waiting.stop();
  expect(await redis.zcard(keys.waiting())).toBe(0);
});
