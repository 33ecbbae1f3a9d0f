// The rate-limit script against a real redis-server: a full bucket takes `burst` requests at once, an empty one
// refuses with the milliseconds until the next token and writes nothing, it refills at the rate on Redis's clock, and a
// bucket key lapses once it would be full again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RateLimits } from "../../../src/journal/index.ts";
import { journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { dumpUnder } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test("a bucket takes burst requests, then refuses with the wait for one token and writes nothing", async () => {
  const f = journalFixture(server);
  const limits = new RateLimits(f.redis, f.keys);
  for (let i = 0; i < 3; i++) expect(await limits.take("c-1", 2, 3)).toBe(0);
  const before = await dumpUnder(f.redis, f.prefix);
  const waitMs = await limits.take("c-1", 2, 3);
  expect(waitMs).toBeGreaterThan(0);
  expect(waitMs).toBeLessThanOrEqual(500);
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  // Another client has a bucket of its own.
  expect(await limits.take("c-2", 2, 3)).toBe(0);
  // The bucket key lapses once it would have refilled: burst / rate seconds, plus one.
  const ttl = await f.redis.pttl(f.keys.clientRate(0, "c-1"));
  expect(ttl).toBeGreaterThan(1000);
  expect(ttl).toBeLessThanOrEqual(2500);
});

test("an emptied bucket refills at the rate on Redis's clock", async () => {
  const f = journalFixture(server);
  const limits = new RateLimits(f.redis, f.keys);
  expect(await limits.take("c-1", 20, 1)).toBe(0);
  const waitMs = await limits.take("c-1", 20, 1);
  expect(waitMs).toBeGreaterThan(0);
  expect(waitMs).toBeLessThanOrEqual(50);
  // The wait the script named has passed on the server's clock: the next take succeeds.
  const deadline = Date.now() + 5000;
  let taken = await limits.take("c-1", 20, 1);
  while (taken !== 0 && Date.now() < deadline) {
    await Bun.sleep(taken);
    taken = await limits.take("c-1", 20, 1);
  }
  expect(taken).toBe(0);
});
