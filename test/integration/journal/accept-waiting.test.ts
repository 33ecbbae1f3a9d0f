// The accept script's waiting leases (a blocking request's slots, taken with its new task on one node): held in both
// sets with the task, refused at either set's maximum writing nothing, never taken by a refusal or a retry's answer,
// and expired leases never counted against a maximum.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WaitingFullError, type WaitingLeaseRequest } from "../../../src/journal/index.ts";
import { WorkerUnavailableError } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { expectRefusalWritesNothing, liveClient, PROFILE, redisMs } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

const TTL_MS = 15_000;

function lease(f: JournalFixture, clientId: string, member: string, max = { client: 2, installation: 3 }) {
  return {
    member,
    clientKey: f.keys.clientWaiting(0, clientId),
    installationKey: f.keys.waiting(),
    ttlMs: TTL_MS,
    maxClient: max.client,
    maxInstallation: max.installation,
  } satisfies WaitingLeaseRequest;
}

function accept(f: JournalFixture, clientId: string, waiting: WaitingLeaseRequest, text = "wait for me") {
  return f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage(text), waiting });
}

describe("accept with a blocking request's waiting leases", () => {
  test("the new task and the member in both sets, expiring after the TTL, in one step", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const before = await redisMs(f.redis);
    const accepted = await accept(f, clientId, lease(f, clientId, "g1:r1"));
    expect(accepted.created).toBe(true);
    for (const key of [f.keys.clientWaiting(0, clientId), f.keys.waiting()]) {
      const expiry = Number(await f.redis.zscore(key, "g1:r1"));
      expect(expiry).toBeGreaterThanOrEqual(before + TTL_MS);
      expect(expiry).toBeLessThanOrEqual((await redisMs(f.redis)) + TTL_MS);
      expect(await f.redis.pttl(key)).toBeGreaterThan(TTL_MS);
    }
  });

  test("-9: the client's share is taken by live leases: refused, nothing written, not even the task", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    await accept(f, clientId, lease(f, clientId, "g1:a"), "a");
    await accept(f, clientId, lease(f, clientId, "g1:b"), "b");
    await expectRefusalWritesNothing(
      f,
      () => accept(f, clientId, lease(f, clientId, "g1:c"), "c"),
      (error) => expect(error).toMatchObject({ name: WaitingFullError.name, which: "client" }),
    );
  });

  test("-10: the installation's slots are taken (by other clients): refused, nothing written", async () => {
    const f = journalFixture(server);
    const [one, two] = [await liveClient(f), await liveClient(f)];
    await accept(f, one, lease(f, one, "g1:a"), "a");
    await accept(f, one, lease(f, one, "g1:b"), "b");
    await accept(f, two, lease(f, two, "g1:c"), "c");
    await expectRefusalWritesNothing(
      f,
      () => accept(f, two, lease(f, two, "g1:d"), "d"),
      (error) => expect(error).toMatchObject({ name: WaitingFullError.name, which: "installation" }),
    );
  });

  test("expired leases in a full set are dropped before it is counted: the request is served", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const lapsed = (await redisMs(f.redis)) - 1;
    await f.redis.zadd(f.keys.clientWaiting(0, clientId), lapsed, "dead:1", lapsed, "dead:2");
    const accepted = await accept(f, clientId, lease(f, clientId, "g1:r1"));
    expect(accepted.created).toBe(true);
    expect(await f.redis.zrange(f.keys.clientWaiting(0, clientId), 0, -1)).toEqual(["g1:r1"]);
  });

  test("a refusal for another reason takes no lease (no live worker)", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    await f.redis.del(f.keys.live(0));
    await expectRefusalWritesNothing(
      f,
      () => accept(f, clientId, lease(f, clientId, "g1:r1")),
      (error) => expect(error).toBeInstanceOf(WorkerUnavailableError),
    );
  });

  test("a retry's answer ({0, taskId}) takes no lease: its caller takes one of its own", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("once");
    const first = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
    const retry = await f.journal.accept({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      message,
      waiting: lease(f, clientId, "g1:retry"),
    });
    expect(retry).toEqual({ created: false, taskId: first.taskId });
    expect(await f.redis.zscore(f.keys.clientWaiting(0, clientId), "g1:retry")).toBeNull();
    expect(await f.redis.zscore(f.keys.waiting(), "g1:retry")).toBeNull();
  });

  test("without waiting leases neither set is touched", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("quick") });
    expect(await f.redis.exists(f.keys.clientWaiting(0, clientId), f.keys.waiting())).toBe(0);
  });
});
