// Stored bytes against a real redis-server: each script counts exactly the bytes it stores (task fields, push configs,
// journal entries) in the task and in its client's and profile's counters; accept, resume and push-config create
// refuse past a budget (the client record's value winning over the default) and then write nothing; actors' output is
// counted, never refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { PushConfigs, PushOutbox } from "../../../src/journal/index.ts";
import { PUSH_CONFIG_DELETE } from "../../../src/journal/lua/push-config-delete.ts";
import { CapacityError, type Message } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  dumpUnder,
  emitArtifact,
  expectRefusalWritesNothing,
  liveClient,
  move,
  PROFILE,
  RETENTION,
} from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

/** The fixed charge each task carries for its keys and bookkeeping (include/stored-bytes.lua). */
const TASK_OVERHEAD_BYTES = 1024;
const bytesOf = (text: string | undefined | null) => Buffer.byteLength(text ?? "");

/**
 * What a task really stores, measured from Redis: its counted fields, its chunk store and its configs, its journal's
 * `ev` values, and its pending webhook deliveries.
 */
async function measured(f: JournalFixture, taskId: string): Promise<{ bytes: number; jbytes: number; obytes: number }> {
  const k = f.keys;
  const fields = await f.redis.hgetall(k.task(0, taskId));
  const configs = await f.redis.hvals(k.pushConfigs(0, taskId));
  const journal = await f.redis.xrange(k.journal(0, taskId), "-", "+");
  const chunks = await f.redis.strlen(k.artifactChunks(0, taskId));
  const outbox = Object.entries(await f.redis.hgetall(k.pushOutbox(0, taskId)));
  return {
    bytes:
      TASK_OVERHEAD_BYTES +
      ["st", "hist", "arts", "meta"].reduce((n, name) => n + bytesOf(fields[name]), 0) +
      chunks +
      configs.reduce((n, json) => n + bytesOf(json), 0),
    jbytes: journal.reduce((n, [, entry]) => n + bytesOf(entry[entry.indexOf("ev") + 1]), 0),
    // the deliveries, not the queues' counters
    obytes: outbox.reduce((n, [field, json]) => n + (/^\d+:/.test(field) ? bytesOf(json) : 0), 0),
  };
}

/** Checks each task's fields against what it stores, and the client's and profile's counters against their sums. */
async function expectExact(f: JournalFixture, clientId: string, taskIds: readonly string[]): Promise<number> {
  let total = 0;
  for (const taskId of taskIds) {
    const [bytes, jbytes, obytes] = await f.redis.hmget(f.keys.task(0, taskId), "bytes", "jbytes", "obytes");
    const real = await measured(f, taskId);
    const counted = { bytes: Number(bytes), jbytes: Number(jbytes), obytes: Number(obytes) };
    expect({ taskId, ...counted }).toEqual({ taskId, ...real });
    total += real.bytes + real.jbytes + real.obytes;
  }
  expect(Number(await f.redis.hget(f.keys.bytes(0), `client:${clientId}`))).toBe(total);
  return total;
}

/** The bytes an accepted task holds now (its three fields). */
async function held(f: JournalFixture, task: AcceptedTask): Promise<number> {
  const [bytes, jbytes, obytes] = await f.redis.hmget(f.keys.task(0, task.taskId), "bytes", "jbytes", "obytes");
  return Number(bytes) + Number(jbytes) + Number(obytes);
}

const configs = (f: JournalFixture) => new PushConfigs(f.redis, f.keys);

function hook(taskId: string, id: string, url = `https://hooks.example/${id}`) {
  return { id, taskId, url };
}

function expectReason(reason: string, retryAfterSeconds = 5): (error: unknown) => void {
  return (error) => {
    expect(error).toBeInstanceOf(CapacityError);
    expect((error as CapacityError).reason).toBe(reason);
    expect((error as CapacityError).retryAfterSeconds).toBe(retryAfterSeconds);
    expect((error as CapacityError).message).toContain("maxStoredBytes");
  };
}

describe("counting", () => {
  test("every step counts exactly what it stores, and the counters are the sums of their tasks", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const message = userMessage("grüße, 世界: bytes, not characters");
    const accepted = await f.journal.accept({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      message,
      metadata: { note: "ünïcode" },
      pushConfig: { id: "inline", url: "https://hooks.example/inline" },
    });
    const task: AcceptedTask = { clientId, taskId: accepted.taskId, contextId: accepted.record?.contextId ?? "" };
    await expectExact(f, clientId, [task.taskId]);

    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    await emitArtifact(f, claim, task, { artifactId: "a", parts: [{ text: "x".repeat(300) }] });
    await expectExact(f, clientId, [task.taskId]);
    // streamed chunks go to the chunk store, counted as they come; the end's whole list compacts them
    for (const text of ["ünï", "cödé", " chunks"]) {
      const update = {
        taskId: task.taskId,
        contextId: task.contextId,
        artifact: { artifactId: "s", parts: [{ text }] },
      };
      await f.ledger.transition({
        claim,
        kind: "artifact",
        state: "TASK_STATE_WORKING",
        event: { artifactUpdate: { ...update, append: true } },
        artifactEvents: [{ artifactUpdate: update }],
        ...RETENTION,
      });
      await expectExact(f, clientId, [task.taskId]);
    }
    expect(await f.redis.strlen(f.keys.artifactChunks(0, task.taskId))).toBeGreaterThan(0);
    // a shorter artifact list and status give bytes back; a history message adds its own
    const note: Message = { messageId: "n1", role: "ROLE_AGENT", parts: [{ text: "need more" }] };
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED", {
      status: { state: "TASK_STATE_INPUT_REQUIRED", message: note },
      artifacts: [],
      historyMessage: note,
    });
    await expectExact(f, clientId, [task.taskId]);
    expect(await f.redis.exists(f.keys.artifactChunks(0, task.taskId))).toBe(0);

    await f.journal.resume({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      taskId: task.taskId,
      message: userMessage("more"),
      pushConfig: { id: "second", url: "https://hooks.example/second" },
    });
    await expectExact(f, clientId, [task.taskId]);
    await configs(f).create(clientId, PROFILE, hook(task.taskId, "inline", "https://hooks.example/i"), 10);
    await expectExact(f, clientId, [task.taskId]);
    await configs(f).delete(clientId, PROFILE, task.taskId, "second");
    await expectExact(f, clientId, [task.taskId]);
    // a journal kept for 0 s goes with the terminal step, its bytes given back in the same step
    await move(f, await claimTask(f, task), task, "TASK_STATE_COMPLETED", { journalRetentionSeconds: 0 });
    expect(await f.redis.exists(f.keys.journal(0, task.taskId))).toBe(0);

    const canceled = await acceptTask(f, clientId, { text: "cancel me" });
    await configs(f).create(clientId, PROFILE, hook(canceled.taskId, "c"), 10);
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    const total = await expectExact(f, clientId, [task.taskId, canceled.taskId]);
    expect(Number(await f.redis.hget(f.keys.bytes(0), `profile:${PROFILE}`))).toBe(total);

    // the deliveries waiting for receivers are counted until they are settled: a retry's copy, then each outcome
    const outbox = new PushOutbox(f.redis, f.keys);
    expect(await f.redis.hget(f.keys.task(0, task.taskId), "obytes")).not.toBeNull();
    for (const settlement of [
      { outcome: "retry", atMs: 0 },
      { outcome: "done" },
      { outcome: "dead", reason: "http status 400" },
      { outcome: "retry", atMs: 0 },
      { outcome: "disable", reason: "http status 410 gone" },
    ] as const) {
      const head = await outbox.head(0, task.taskId, "inline");
      if (head === undefined) throw new Error("no delivery waits");
      expect(await outbox.settle(head, settlement)).toBe(true);
      await expectExact(f, clientId, [task.taskId, canceled.taskId]);
    }
    // a deleted config ("second", and "inline" after the 410): what it still had queued goes as it is dropped
    for (const cfg of ["inline", "second"]) {
      for (let head = await outbox.head(0, task.taskId, cfg); head; head = await outbox.head(0, task.taskId, cfg)) {
        await outbox.settle(head, { outcome: "done" });
      }
    }
    await expectExact(f, clientId, [task.taskId, canceled.taskId]);
    expect(Number(await f.redis.hget(f.keys.task(0, task.taskId), "obytes"))).toBe(0);
  });

  test("actors' output is counted, never refused: past the budget the task completes and the next message is refused", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f, { maxStoredBytes: 4000 });
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    const result = await emitArtifact(f, claim, task, { artifactId: "a", parts: [{ text: "y".repeat(10_000) }] });
    expect(result.ok).toBe(true);
    expect(await move(f, claim, task, "TASK_STATE_COMPLETED")).toMatchObject({ ok: true });
    expect(await expectExact(f, clientId, [task.taskId])).toBeGreaterThan(20_000);
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("next") }),
      expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED"),
    );
  });
});

describe("accept and resume budgets", () => {
  test("-6: the client's budget (its record's value over the default) refuses, writes nothing; others are served", async () => {
    const f = journalFixture(server, { clients: { maxStoredBytes: 1_000_000 }, retryAfterSeconds: 7 });
    const probe = await liveClient(f);
    const size = await held(f, await acceptTask(f, probe));
    const small = await liveClient(f, { maxStoredBytes: Math.floor(size * 1.5) });
    const message = userMessage("hello");
    const first = await f.journal.accept({ clientId: small, profile: PROFILE, profileQuota: 0, message });
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept({ clientId: small, profile: PROFILE, profileQuota: 0, message: userMessage("hello") }),
      (error) => {
        expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED", 7)(error);
        expect((error as CapacityError).metadata).toEqual({ clientId: small });
      },
    );
    // a retry of the accepted message is answered at the budget (dedup comes first)
    expect(await f.journal.accept({ clientId: small, profile: PROFILE, profileQuota: 0, message })).toEqual({
      created: false,
      taskId: first.taskId,
    });
    // the default applies to a client whose record has none; a record's 0 means no limit under any default
    expect((await acceptTask(f, probe)).taskId).toBeString();
    const tiny = journalFixture(server, { clients: { maxStoredBytes: 10 } });
    const unlimited = await liveClient(tiny, { maxStoredBytes: 0 });
    expect((await acceptTask(tiny, unlimited)).taskId).toBeString();
    const defaulted = await liveClient(tiny);
    await expectRefusalWritesNothing(
      tiny,
      () => acceptTask(tiny, defaulted),
      expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED"),
    );
  });

  test("regression: a flood of tiny tasks meets the budget (each task carries its keys' fixed charge)", async () => {
    const f = journalFixture(server);
    // 10 KiB: before the fixed charge, about 20 one-character tasks fitted, each leaving ~1 KB of keys uncounted
    const client = await liveClient(f, { maxStoredBytes: 10 * 1024 });
    let accepted = 0;
    let refused: unknown;
    while (refused === undefined && accepted < 100) {
      refused = await acceptTask(f, client, { text: "x" }).then(
        () => {
          accepted += 1;
          return undefined;
        },
        (error: unknown) => error,
      );
    }
    expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED")(refused);
    expect(accepted).toBeLessThan(10);
    expect(Number(await f.redis.hget(f.keys.bytes(0), `client:${client}`))).toBeGreaterThan(accepted * 1024);
  });

  test("-7: the profile's budget refuses every client of the profile; another profile is served", async () => {
    const f = journalFixture(server);
    const first = await liveClient(f);
    const second = await liveClient(f);
    const size = await held(f, await acceptTask(f, first));
    const input = (clientId: string, profile = PROFILE) => ({
      clientId,
      profile,
      profileQuota: 0,
      profileMaxStoredBytes: Math.floor(size * 1.5),
      message: userMessage("hello"),
    });
    await expectRefusalWritesNothing(
      f,
      () => f.journal.accept(input(second)),
      (error) => {
        expect(error).toBeInstanceOf(CapacityError);
        expect((error as CapacityError).reason).toBe("PROFILE_STORAGE_LIMIT_EXCEEDED");
        expect((error as CapacityError).metadata).toEqual({ profile: PROFILE });
        expect((error as CapacityError).message).toContain("quota.maxStoredBytes");
      },
    );
    expect((await f.journal.accept(input(second, "other"))).created).toBe(true);
  });

  test("-10 and -11: a follow-up that would pass the client's or the profile's budget is refused, nothing written", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await move(f, await claimTask(f, task), task, "TASK_STATE_INPUT_REQUIRED");
    const size = await held(f, task);
    const follow = (extra: Record<string, number> = {}) =>
      f.journal.resume({
        clientId,
        profile: PROFILE,
        profileQuota: 0,
        taskId: task.taskId,
        message: userMessage("z".repeat(2000)),
        ...extra,
      });
    await f.clients.setLimits(clientId, { maxStoredBytes: size + 1000 });
    await expectRefusalWritesNothing(f, () => follow(), expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED"));
    await f.clients.setLimits(clientId, { maxStoredBytes: null });
    await expectRefusalWritesNothing(
      f,
      () => follow({ profileMaxStoredBytes: size + 1000 }),
      (error) => expect((error as CapacityError).reason).toBe("PROFILE_STORAGE_LIMIT_EXCEEDED"),
    );
    expect((await follow({ profileMaxStoredBytes: size + 10_000 })).created).toBe(true);
    await expectExact(f, clientId, [task.taskId]);
  });
});

describe("push config budgets", () => {
  test("-3 and -4: a config that would pass a budget is refused and nothing written; a shorter replacement passes", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    await configs(f).create(clientId, PROFILE, hook(task.taskId, "a", `https://hooks.example/${"p".repeat(200)}`), 10);
    const size = await held(f, task);
    await f.clients.setLimits(clientId, { maxStoredBytes: size });
    const create = (id: string, url: string, budgets = {}) =>
      configs(f).create(clientId, PROFILE, hook(task.taskId, id, url), 10, { retryAfterSeconds: 3, ...budgets });
    await expectRefusalWritesNothing(
      f,
      () => create("b", "https://hooks.example/b"),
      expectReason("CLIENT_STORAGE_LIMIT_EXCEEDED", 3),
    );
    await create("a", "https://hooks.example/short");
    await f.clients.setLimits(clientId, { maxStoredBytes: 0 });
    await expectRefusalWritesNothing(
      f,
      () => create("b", "https://hooks.example/b", { profileMaxStoredBytes: 10 }),
      (error) => expect((error as CapacityError).reason).toBe("PROFILE_STORAGE_LIMIT_EXCEEDED"),
    );
    await create("b", "https://hooks.example/b", { clientMaxStoredBytes: 1 });
    await expectExact(f, clientId, [task.taskId]);
  });

  test("pushConfigDelete: 1 deleted and its bytes given back; 0 no such config; -1 not this client's task", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const stranger = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const before = await held(f, task);
    await configs(f).create(clientId, PROFILE, hook(task.taskId, "a"), 10);
    const remove = (asClient: string, id: string, profile = PROFILE) =>
      PUSH_CONFIG_DELETE.run(
        f.redis,
        { task: f.keys.task(0, task.taskId), pushConfigs: f.keys.pushConfigs(0, task.taskId), bytes: f.keys.bytes(0) },
        { clientId: asClient, profile, configId: id },
      );
    let dump = await dumpUnder(f.redis, f.prefix);
    expect(await remove(stranger, "a")).toBe("taskNotFound");
    expect(await remove(clientId, "a", "other")).toBe("taskNotFound");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
    expect(await remove(clientId, "a")).toBe("deleted");
    expect(await held(f, task)).toBe(before);
    await expectExact(f, clientId, [task.taskId]);
    dump = await dumpUnder(f.redis, f.prefix);
    expect(await remove(clientId, "a")).toBe("noSuchConfig");
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(dump);
  });
});

describe("interrupted tasks", () => {
  test("-8: at its limit of interrupted tasks a client is refused until one is answered; a retry is still answered", async () => {
    const f = journalFixture(server, { clients: { maxInterruptedTasks: 5 } });
    const clientId = await liveClient(f, { maxInterruptedTasks: 1 });
    const message = userMessage("ask me");
    const accepted = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message });
    const task: AcceptedTask = { clientId, taskId: accepted.taskId, contextId: accepted.record?.contextId ?? "" };
    await move(f, await claimTask(f, task), task, "TASK_STATE_INPUT_REQUIRED");
    expect(await f.redis.smembers(f.keys.clientInterrupted(0, clientId))).toEqual([task.taskId]);
    await expectRefusalWritesNothing(
      f,
      () => acceptTask(f, clientId),
      (error) => {
        expect(error).toBeInstanceOf(CapacityError);
        expect((error as CapacityError).reason).toBe("INTERRUPTED_TASKS_LIMIT_EXCEEDED");
        expect((error as CapacityError).message).toContain("maxInterruptedTasks");
      },
    );
    expect(await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message })).toEqual({
      created: false,
      taskId: task.taskId,
    });
    // the follow-up itself is not refused by the limit it relieves
    const resumed = await f.journal.resume({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      taskId: task.taskId,
      message: userMessage("the answer"),
    });
    expect(resumed.created).toBe(true);
    expect(await f.redis.scard(f.keys.clientInterrupted(0, clientId))).toBe(0);
    expect(await f.redis.zscore(f.keys.inputDue(0), task.taskId)).toBeNull();
    expect((await acceptTask(f, clientId)).taskId).toBeString();
    // a client without a value of its own gets the default (5 here)
    const other = await liveClient(f);
    for (let i = 0; i < 5; i++) {
      const t = await acceptTask(f, other);
      await move(f, await claimTask(f, t), t, "TASK_STATE_AUTH_REQUIRED");
    }
    await expect(acceptTask(f, other)).rejects.toMatchObject({ reason: "INTERRUPTED_TASKS_LIMIT_EXCEEDED" });
  });
});
