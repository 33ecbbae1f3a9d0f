// ClientRegistry against a real redis-server: the API key is shown once and only its SHA-256 is stored; authenticate,
// revoke and setLimit take effect at once, including on what accept allows.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hashApiKey } from "../../../src/journal/index.ts";
import { CapacityError } from "../../../src/protocol/index.ts";
import { journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { acceptTask, dumpUnder } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test("add shows the key once; no key or value under the prefix holds it, only its SHA-256", async () => {
  const f = journalFixture(server);
  const { record, apiKey } = await f.clients.add({ name: "acme", profiles: ["echo", "summarize"], limit: 3 });
  expect(apiKey.length).toBeGreaterThan(30);
  expect(record).toMatchObject({ name: "acme", profiles: ["echo", "summarize"], limit: 3, revoked: false });
  const stored = JSON.stringify(await dumpUnder(f.redis, f.prefix));
  expect(stored).not.toContain(apiKey);
  expect(stored).not.toContain(apiKey.slice(4, 24));
  expect(stored).toContain(hashApiKey(apiKey));
  expect(hashApiKey(apiKey)).toMatch(/^[0-9a-f]{64}$/);
  expect(await f.clients.get(record.id)).toEqual(record);
  const second = await f.clients.add({ name: "beta" });
  expect(second.apiKey).not.toBe(apiKey);
  expect(second.record.profiles).toEqual(["*"]);
  expect((await f.clients.list()).map((r) => r.name).sort()).toEqual(["acme", "beta"]);
});

test("authenticate finds the client of a key and nothing for a wrong, empty or oversized key", async () => {
  const f = journalFixture(server);
  const { record, apiKey } = await f.clients.add({ name: "acme" });
  expect(await f.clients.authenticate(apiKey)).toEqual(record);
  expect(await f.clients.authenticate(`${apiKey}x`)).toBeUndefined();
  expect(await f.clients.authenticate("")).toBeUndefined();
  expect(await f.clients.authenticate("a".repeat(513))).toBeUndefined();
  expect(await f.clients.authenticate(hashApiKey(apiKey))).toBeUndefined();
});

test("revoke stops authentication at once and keeps the record, marked revoked", async () => {
  const f = journalFixture(server);
  const { record, apiKey } = await f.clients.add({ name: "acme" });
  const other = await f.clients.add({ name: "other" });
  expect(await f.clients.revoke(record.id)).toBe(true);
  expect(await f.clients.authenticate(apiKey)).toBeUndefined();
  expect((await f.clients.get(record.id))?.revoked).toBe(true);
  expect(await f.clients.authenticate(other.apiKey)).toEqual(other.record);
  expect(await f.clients.revoke("no-such-client")).toBe(false);
});

test("setLimit changes the record and what accept allows", async () => {
  const f = journalFixture(server);
  const { record } = await f.clients.add({ name: "acme" });
  await f.ledger.beat(0, 300);
  expect(await f.clients.setLimit(record.id, 1)).toBe(true);
  expect((await f.clients.get(record.id))?.limit).toBe(1);
  await acceptTask(f, record.id);
  await expect(acceptTask(f, record.id)).rejects.toBeInstanceOf(CapacityError);
  expect(await f.clients.setLimit(record.id, 0)).toBe(true);
  expect((await acceptTask(f, record.id)).taskId).toBeString();
  expect(await f.clients.setLimit("no-such-client", 5)).toBe(false);
  expect(await f.clients.get("no-such-client")).toBeUndefined();
});
