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

test("rotate: the new key finds the same client, the old one nothing; only hashes are stored; tasks stay the client's", async () => {
  const f = journalFixture(server);
  const { record, apiKey } = await f.clients.add({ name: "acme" });
  await f.ledger.beat(0, 300);
  const task = await acceptTask(f, record.id);
  const heard: string[] = [];
  const subscriber = server.client();
  await subscriber.subscribe(f.keys.revokedChannel());
  subscriber.on("message", (_channel: string, clientId: string) => heard.push(clientId));

  const rotated = await f.clients.rotate(record.id);
  if (rotated === undefined || rotated === "revoked") throw new Error("not rotated");
  expect(rotated.previousKeyUntil).toBeUndefined();
  expect(rotated.apiKey).not.toBe(apiKey);
  expect(await f.clients.authenticate(apiKey)).toBeUndefined();
  expect(await f.clients.authenticate(rotated.apiKey)).toEqual(record);
  expect(await f.redis.exists(f.keys.apiKey(hashApiKey(apiKey)))).toBe(0);
  const stored = JSON.stringify(await dumpUnder(f.redis, f.prefix));
  expect(stored).not.toContain(rotated.apiKey);
  expect(stored).toContain(hashApiKey(rotated.apiKey));
  // the task is the same client's: a snapshot through the client's id finds it
  expect((await f.journal.snapshot(record.id, task.taskId))?.record.id).toBe(task.taskId);
  // without a grace, gateways are told (they forget cached lookups and close the client's streams)
  while (heard.length === 0) await Bun.sleep(5);
  expect(heard).toEqual([record.id]);
  subscriber.disconnect();
});

test("rotate with a grace: both keys work, the old one's mapping lapses then; a third rotation gives it up at once", async () => {
  const f = journalFixture(server);
  const { record, apiKey: first } = await f.clients.add({ name: "acme" });
  const second = await f.clients.rotate(record.id, 600);
  if (second === undefined || second === "revoked") throw new Error("not rotated");
  expect(second.previousKeyUntil!.getTime() - Date.now()).toBeGreaterThan(590_000);
  expect(await f.clients.authenticate(first)).toEqual(record);
  expect(await f.clients.authenticate(second.apiKey)).toEqual(record);
  const ttl = await f.redis.ttl(f.keys.apiKey(hashApiKey(first)));
  expect(ttl).toBeGreaterThan(590);
  expect(ttl).toBeLessThanOrEqual(600);
  expect(await f.redis.ttl(f.keys.apiKey(hashApiKey(second.apiKey)))).toBe(-1);

  // at most two keys work: the first is given up, the second kept for the new grace
  const third = await f.clients.rotate(record.id, 60);
  if (third === undefined || third === "revoked") throw new Error("not rotated");
  expect(await f.clients.authenticate(first)).toBeUndefined();
  expect(await f.clients.authenticate(second.apiKey)).toEqual(record);
  expect(await f.clients.authenticate(third.apiKey)).toEqual(record);

  // revoke ends the kept key as well as the current one
  expect(await f.clients.revoke(record.id)).toBe(true);
  expect(await f.redis.exists(f.keys.apiKey(hashApiKey(second.apiKey)))).toBe(0);
  expect(await f.redis.exists(f.keys.apiKey(hashApiKey(third.apiKey)))).toBe(0);
});

test("rotate refuses an unknown client and a revoked one, and leaves no mapping of a key it did not give", async () => {
  const f = journalFixture(server);
  const { record, apiKey } = await f.clients.add({ name: "acme" });
  const before = await f.redis.keys(`${f.prefix}*apikey*`);
  expect(await f.clients.rotate("no-such-client")).toBeUndefined();
  expect(await f.clients.revoke(record.id)).toBe(true);
  expect(await f.clients.rotate(record.id)).toBe("revoked");
  expect(await f.clients.authenticate(apiKey)).toBeUndefined();
  const after = await f.redis.keys(`${f.prefix}*apikey*`);
  expect(after.length).toBe(before.length - 1); // only the revoked key's mapping went
});
