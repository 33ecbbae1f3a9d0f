// The accept script against a real redis-server: each documented return, and that every refusal leaves every key and
// value under the prefix exactly as it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  CapacityError,
  MessageIdReusedError,
  UnauthenticatedError,
  WorkerUnavailableError,
} from "../../../src/protocol/index.ts";
import { journalFixture, userMessage } from "../../support/journal.ts";
import { keysUnder, startRedis, type TestRedis } from "../../support/redis.ts";
import { acceptTask, dumpUnder, expectRefusalWritesNothing, liveClient, PROFILE, redisSeconds } from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

describe("accept", () => {
  test("creates the task at revision 1 with its run, dedup record, indexes and queue entry, and no journal yet", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("hello", { metadata: { trace: "t1" } });
    const accepted = await f.journal.accept({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      message,
      metadata: { a: 1 },
    });
    expect(accepted.created).toBe(true);
    const { taskId } = accepted;
    const k = f.keys;
    const task = await f.redis.hgetall(k.task(0, taskId));
    expect(task).toMatchObject({ cli: clientId, prof: PROFILE, state: "TASK_STATE_SUBMITTED", rev: "1" });
    expect(JSON.parse(task.meta ?? "null")).toEqual({ a: 1 });
    const history = JSON.parse(task.hist ?? "[]");
    expect(history).toEqual([{ ...message, taskId, contextId: task.ctx }]);
    const run = await f.redis.hgetall(k.run(0, taskId));
    const runId = String(run.id);
    // the key names the task and its run (run:<taskId>): the hash repeats neither id
    expect([task.id, task.run]).toEqual([undefined, undefined]);
    expect(run).toMatchObject({
      id: expect.stringMatching(/^[0-9A-Z]{26}$/),
      task: taskId,
      client: clientId,
      state: "queued",
      fence: "0",
      tries: "0",
    });
    const queue = await f.redis.xrange(k.queue(0), "-", "+");
    // the entry names what its claim needs: the run, the task, its client, and the keys of its ListTasks indexes
    expect(queue).toEqual([
      [String(run.entry), ["run", runId, "task", taskId, "client", clientId, "prof", PROFILE, "ctx", String(task.ctx)]],
    ]);
    // no journal yet: it holds the revisions after the first (a stream's fixed cost would weigh on every queued task),
    // and a reader's snapshot of revision 1 starts before its first entry
    expect(await f.redis.exists(k.journal(0, taskId))).toBe(0);
    expect(task.jbytes).toBeUndefined();
    expect((await f.journal.snapshot(clientId, taskId, PROFILE))?.cursor).toBe("0-0");
    // and what accept returned is that task, so that an answer needs no read
    expect(accepted.record).toMatchObject({ id: taskId, rev: 1, history, metadata: { a: 1 }, artifacts: [] });
    expect(await f.redis.get(k.dedup(0, clientId, PROFILE, message.messageId))).toEndWith(`:${taskId}`);
    expect(await f.redis.ttl(k.dedup(0, clientId, PROFILE, message.messageId))).toBeGreaterThan(3500);
    expect(await f.redis.smembers(k.clientActive(0, clientId))).toEqual([taskId]);
    expect(await f.redis.smembers(k.profileActive(0, PROFILE))).toEqual([taskId]);
    expect(await f.redis.zscore(k.clientTasks(0, clientId, PROFILE), taskId)).toBe(task.ts ?? "missing");
  });

  test("a repeated messageId with the same content returns the first task and writes nothing", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("once");
    const first = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
    const before = await dumpUnder(f.redis, f.prefix);
    const again = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: { ...message } });
    expect(again).toEqual({ created: false, taskId: first.taskId });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("the messageId dedup is per client and profile: the same message sent to another profile is a new task there", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("same id, two agents", { contextId: "ctx-shared" });
    const first = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
    const other = await f.journal.accept({ clientId, profile: "other", profileQuota: 0, message: { ...message } });
    expect(other.created).toBe(true);
    expect(other.taskId).not.toBe(first.taskId);
    expect(await f.redis.hget(f.keys.task(0, other.taskId), "prof")).toBe("other");
    // each profile's retry still finds its own task
    const again = await f.journal.accept({ clientId, profile: "other", profileQuota: 0, message: { ...message } });
    expect(again).toEqual({ created: false, taskId: other.taskId });
    // and each profile lists its own (a context shared by name is still one per profile)
    for (const [profile, taskId] of [
      [PROFILE, first.taskId],
      ["other", other.taskId],
    ] as const) {
      const page = await f.journal.list(clientId, { profile, pageSize: 10, contextId: "ctx-shared" });
      expect(page.records.map((r) => r.id)).toEqual([taskId]);
    }
  });

  test("a retry of an accepted message is answered even without a worker and at the client's limit", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f, { limit: 1 });
    const message = userMessage("retry");
    const first = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 1, message });
    await f.redis.del(f.keys.live(0));
    const again = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 1, message });
    expect(again).toEqual({ created: false, taskId: first.taskId });
  });

  test("-1: no worker beat at all is WORKER_UNAVAILABLE with Retry-After, nothing stored", async () => {
    const f = journalFixture(server, { retryAfterSeconds: 7 });
    const { record } = await f.clients.add({ name: "no-worker" });
    expect(await keysUnder(f.redis, f.keys.live(0))).toEqual([]);
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId: record.id, profile: PROFILE, profileQuota: 0, message: userMessage("x") }),
      (error) => {
        expect(error).toBeInstanceOf(WorkerUnavailableError);
        expect((error as WorkerUnavailableError).reason).toBe("WORKER_UNAVAILABLE");
        expect((error as WorkerUnavailableError).retryAfterSeconds).toBe(7);
      },
    );
  });

  test("-1: a beat older than livenessSeconds (Redis clock) is WORKER_UNAVAILABLE; a fresh one passes", async () => {
    const f = journalFixture(server, { livenessSeconds: 30 });
    const clientId = await liveClient(f);
    const now = await redisSeconds(f.redis);
    await f.redis.set(f.keys.live(0), now - 31);
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("x") }),
      (error) => expect(error).toBeInstanceOf(WorkerUnavailableError),
    );
    await f.redis.set(f.keys.live(0), now - 29);
    expect((await acceptTask(f, clientId)).taskId).toBeString();
  });

  test("-2: a client at its limit of queued + running tasks is refused with the client-limit reason", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f, { limit: 2 });
    await acceptTask(f, clientId);
    await acceptTask(f, clientId);
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("third") }),
      (error) => {
        expect(error).toBeInstanceOf(CapacityError);
        expect((error as CapacityError).reason).toBe("CLIENT_TASK_LIMIT_EXCEEDED");
        expect((error as CapacityError).metadata).toEqual({ clientId });
      },
    );
  });

  test("-3: a full profile quota is refused with the quota reason, while another profile still accepts", async () => {
    const f = journalFixture(server);
    const first = await liveClient(f);
    const second = await liveClient(f);
    await acceptTask(f, first, { quota: 1 });
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId: second, profile: PROFILE, profileQuota: 1, message: userMessage("q") }),
      (error) => {
        expect(error).toBeInstanceOf(CapacityError);
        expect((error as CapacityError).reason).toBe("PROFILE_QUOTA_EXCEEDED");
        expect((error as CapacityError).metadata).toEqual({ profile: PROFILE });
      },
    );
    expect((await acceptTask(f, second, { profile: "other", quota: 1 })).taskId).toBeString();
  });

  test("-4: a messageId reused with other content is refused as MESSAGE_ID_REUSED", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("original");
    await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
    await expectRefusalWritesNothing(
      f,
      () =>
        f.journal.accept({
          clientId,
          profile: PROFILE,
          profileQuota: 0,
          message: { ...message, parts: [{ text: "changed" }] },
        }),
      (error) => {
        expect(error).toBeInstanceOf(MessageIdReusedError);
        expect((error as MessageIdReusedError).reason).toBe("MESSAGE_ID_REUSED");
      },
    );
  });

  test("-5: a revoked client and an unknown client are refused as UNAUTHENTICATED", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    await acceptTask(f, clientId);
    await f.clients.revoke(clientId);
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("after revoke") }),
      (error) => expect(error).toBeInstanceOf(UnauthenticatedError),
    );
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId: "nobody", profile: PROFILE, profileQuota: 0, message: userMessage("x") }),
      (error) => expect(error).toBeInstanceOf(UnauthenticatedError),
    );
  });

  test("checks run in order: revoked before no worker, no worker before the client limit, limit before quota", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f, { limit: 1 });
    await acceptTask(f, clientId, { quota: 1 });
    const attempt = () => f.journal.accept({ clientId, profile: PROFILE, profileQuota: 1, message: userMessage("o") });
    await expect(attempt()).rejects.toMatchObject({ reason: "CLIENT_TASK_LIMIT_EXCEEDED" });
    await f.redis.del(f.keys.live(0));
    await expect(attempt()).rejects.toBeInstanceOf(WorkerUnavailableError);
    await f.clients.revoke(clientId);
    await expect(attempt()).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});

test("after SCRIPT FLUSH (as after a Redis restart) the loader falls back from EVALSHA and accept still works", async () => {
  const f = journalFixture(server);
  const clientId = await liveClient(f);
  await acceptTask(f, clientId);
  await f.redis.script("FLUSH");
  expect((await acceptTask(f, clientId)).taskId).toBeString();
  expect(await f.redis.xlen(f.keys.queue(0))).toBe(2);
});
