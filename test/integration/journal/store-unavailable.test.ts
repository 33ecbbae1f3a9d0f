// Accept against a Redis that cannot take the write: at its maxmemory with noeviction, and stopped. The call fails
// with STORE_UNAVAILABLE and nothing is written; once memory is freed the same call succeeds.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { StoreUnavailableError } from "../../../src/protocol/index.ts";
import { journalFixture, userMessage } from "../../support/journal.ts";
import { keysUnder, startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { dumpUnder, liveClient, PROFILE } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis({ maxmemory: "2mb" });
});
afterAll(async () => {
  await server.stop();
});

test("at maxmemory with noeviction, accept fails with StoreUnavailableError and writes nothing", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  const filler = testPrefix();
  const chunk = "x".repeat(64 * 1024);
  let full = false;
  for (let i = 0; i < 200 && !full; i++) {
    try {
      await f.redis.set(`${filler}fill:${i}`, chunk);
    } catch (error) {
      expect(String(error)).toContain("OOM");
      full = true;
    }
  }
  expect(full).toBe(true);
  const keysBefore = await keysUnder(f.redis, f.prefix);
  const before = await dumpUnder(f.redis, f.prefix);
  const message = userMessage("no room");
  const attempt = f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreUnavailableError);
  expect((error as StoreUnavailableError).reason).toBe("STORE_UNAVAILABLE");
  expect(String((error as StoreUnavailableError).cause)).toContain("OOM");
  expect(await keysUnder(f.redis, f.prefix)).toEqual(keysBefore);
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);

  // the same message is accepted once memory is back: the refusal left no dedup record behind
  const fillers = await keysUnder(f.redis, filler);
  await f.redis.del(...fillers);
  const accepted = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
  expect(accepted.created).toBe(true);
});

test("with the server stopped, accept fails with StoreUnavailableError", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  server.kill();
  try {
    const error = await f.journal
      .accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("down") })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(StoreUnavailableError);
  } finally {
    await server.restart();
  }
});
