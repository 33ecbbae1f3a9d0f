// Retention and the task index against a real redis-server: TTLs at terminal states, active slots released at
// terminal and interrupted states, and ListTasks (order, pages, filters, tokens) through TaskJournal.list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { LIST_FILTER_READS } from "../../../src/journal/index.ts";
import { InvalidParamsError } from "../../../src/protocol/index.ts";
import { journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  emitArtifact,
  liveClient,
  move,
  PROFILE,
  RETENTION,
  redisMs,
} from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

describe("retention", () => {
  test("a terminal transition schedules the deletion: the journal at its retention, then the task; no TTL", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    const keys = [f.keys.task(0, task.taskId), f.keys.run(0, task.taskId), f.keys.journal(0, task.taskId)];
    expect(await f.redis.zscore(f.keys.purge(0), task.taskId)).toBeNull();
    const before = await redisMs(f.redis);
    const result = await f.ledger.transition({
      claim,
      kind: "status",
      state: "TASK_STATE_COMPLETED",
      status: { state: "TASK_STATE_COMPLETED" },
      event: {
        statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: { state: "TASK_STATE_COMPLETED" } },
      },
      retentionSeconds: 5000,
      journalRetentionSeconds: 700,
    });
    const after = await redisMs(f.redis);
    expect(result).toEqual({ ok: true, rev: 3 });
    for (const key of keys) expect(await f.redis.ttl(key)).toBe(-1);
    const purgeAt = Number(await f.redis.hget(keys[0] ?? "", "purge"));
    const journalAt = Number(await f.redis.zscore(f.keys.purge(0), task.taskId));
    expect(purgeAt).toBeWithin(before + 5_000_000, after + 5_000_001);
    expect(journalAt).toBeWithin(before + 700_000, after + 700_001);
  });

  for (const state of ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED", "TASK_STATE_FAILED"] as const) {
    test(`${state} removes the task from the client's and the profile's active sets`, async () => {
      const f = journalFixture(server);
      const clientId = await liveClient(f, { limit: 1 });
      const task = await acceptTask(f, clientId, { quota: 1 });
      const sets = [f.keys.clientActive(0, clientId), f.keys.profileActive(0, PROFILE)];
      for (const key of sets) expect(await f.redis.smembers(key)).toEqual([task.taskId]);
      await move(f, await claimTask(f, task), task, state);
      for (const key of sets) expect(await f.redis.smembers(key)).toEqual([]);
      // the freed slot is usable at once, under the client's limit of 1 and the profile's quota of 1
      expect((await acceptTask(f, clientId, { quota: 1 })).taskId).toBeString();
    });
  }
});

describe("ListTasks", () => {
  test("newest first, in pages of pageSize with a token, an empty token on the last page, and totalSize", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const created: AcceptedTask[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(await acceptTask(f, clientId));
      await Bun.sleep(3);
    }
    await acceptTask(f, await liveClient(f));
    const newestFirst = created.map((t) => t.taskId).reverse();
    const seen: string[] = [];
    let token: string | undefined;
    const tokens: string[] = [];
    do {
      const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 2, pageToken: token });
      expect(page.totalSize).toBe(5);
      expect(page.records.length).toBeLessThanOrEqual(2);
      seen.push(...page.records.map((r) => r.id));
      tokens.push(page.nextPageToken);
      token = page.nextPageToken === "" ? undefined : page.nextPageToken;
    } while (token !== undefined && tokens.length < 10);
    expect(seen).toEqual(newestFirst);
    expect(tokens.length).toBe(3);
    expect(tokens.at(-1)).toBe("");
    const all = await f.journal.list(clientId, { profile: PROFILE, pageSize: 5 });
    expect(all.nextPageToken).toBe("");
    expect(all.records.map((r) => r.id)).toEqual(newestFirst);
  });

  test("a status change moves a task to the front; contextId and status filter; totalSize counts matches", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const message = userMessage(`in context ${i}`, { contextId: "ctx-a" });
      ids.push((await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message })).taskId);
      await Bun.sleep(3);
    }
    const inContext = ids as [string, string, string];
    const outside = await acceptTask(f, clientId);
    await Bun.sleep(3);
    const first = { clientId, taskId: inContext[0], contextId: "ctx-a" };
    await move(f, await claimTask(f, first), first, "TASK_STATE_COMPLETED");
    const everything = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10 });
    expect(everything.records.map((r) => r.id)).toEqual([first.taskId, outside.taskId, inContext[2], inContext[1]]);
    const byContext = await f.journal.list(clientId, { profile: PROFILE, pageSize: 2, contextId: "ctx-a" });
    expect(byContext.records.map((r) => r.id)).toEqual([first.taskId, inContext[2]]);
    expect(byContext.totalSize).toBe(3);
    const next = await f.journal.list(clientId, {
      profile: PROFILE,
      pageSize: 2,
      contextId: "ctx-a",
      pageToken: byContext.nextPageToken,
    });
    expect(next.records.map((r) => r.id)).toEqual([inContext[1]]);
    expect(next.nextPageToken).toBe("");
    const completed = await f.journal.list(clientId, {
      profile: PROFILE,
      pageSize: 10,
      status: "TASK_STATE_COMPLETED",
    });
    expect(completed.records.map((r) => r.id)).toEqual([first.taskId]);
    expect(completed.totalSize).toBe(1);
    const both = await f.journal.list(clientId, {
      profile: PROFILE,
      pageSize: 10,
      contextId: "ctx-a",
      status: "TASK_STATE_SUBMITTED",
    });
    expect(both.records.map((r) => r.id)).toEqual([inContext[2], inContext[1]]);
  });

  test("statusTimestampAfter is inclusive", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const older = await acceptTask(f, clientId);
    await Bun.sleep(3);
    const newer = await acceptTask(f, clientId);
    const at = (await f.journal.snapshot(clientId, newer.taskId))?.record.timestampMs ?? 0;
    const from = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10, statusTimestampAfterMs: at });
    expect(from.records.map((r) => r.id)).toEqual([newer.taskId]);
    expect(from.totalSize).toBe(1);
    const later = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10, statusTimestampAfterMs: at + 1 });
    expect(later).toEqual({ records: [], nextPageToken: "", totalSize: 0 });
    const all = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10, statusTimestampAfterMs: at - 10_000 });
    expect(all.records.map((r) => r.id)).toEqual([newer.taskId, older.taskId]);
  });

  test("a forged or malformed page token is INVALID_PARAMS", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    await acceptTask(f, clientId);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    for (const pageToken of [
      "not-a-token",
      "!!!",
      encode({ score: 1 }),
      encode([1, 2]),
      encode([1, "x", -1]),
      encode([1, "x", 0, 0]),
      encode("x"),
    ]) {
      const error = await f.journal
        .list(clientId, { profile: PROFILE, pageSize: 10, pageToken })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect((error as InvalidParamsError).violations[0]?.field).toBe("pageToken");
    }
  });

  test("a task whose hash has expired is left out and dropped from the index", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const kept = await acceptTask(f, clientId);
    const expired = await acceptTask(f, clientId);
    await f.redis.del(f.keys.task(0, expired.taskId));
    const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10 });
    expect(page.records.map((r) => r.id)).toEqual([kept.taskId]);
    expect(page.totalSize).toBe(1);
    expect(await f.redis.zscore(f.keys.clientTasks(0, clientId, PROFILE), expired.taskId)).toBeNull();
  });

  test("an artifact does not move a task: order and statusTimestampAfter follow the status timestamp", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const older = await acceptTask(f, clientId);
    const claim = await claimTask(f, older);
    await move(f, claim, older, "TASK_STATE_WORKING");
    await Bun.sleep(3);
    const newer = await acceptTask(f, clientId);
    const newerMs = (await f.journal.snapshot(clientId, newer.taskId))?.record.timestampMs ?? 0;
    const statusMs = (await f.journal.snapshot(clientId, older.taskId))?.record.timestampMs ?? 0;
    await Bun.sleep(3);
    await emitArtifact(f, claim, older, { artifactId: "a", parts: [{ text: "later output" }] });
    const record = (await f.journal.snapshot(clientId, older.taskId))?.record;
    expect(record?.rev).toBe(3);
    expect(record?.timestampMs).toBe(statusMs);
    const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10 });
    expect(page.records.map((r) => r.id)).toEqual([newer.taskId, older.taskId]);
    const after = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10, statusTimestampAfterMs: newerMs });
    expect(after.records.map((r) => r.id)).toEqual([newer.taskId]);
    expect(after.totalSize).toBe(1);
  });

  test("tasks with the same status timestamp page without a gap or a repeat", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const tasks = await Promise.all(Array.from({ length: 7 }, () => acceptTask(f, clientId)));
    const index = f.keys.clientTasks(0, clientId, PROFILE);
    for (const task of tasks) await f.redis.zadd(index, 1_000, task.taskId);
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 3, pageToken });
      expect(page.totalSize).toBe(7);
      seen.push(...page.records.map((r) => r.id));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    expect(seen).toEqual(
      tasks
        .map((t) => t.taskId)
        .sort()
        .reverse(),
    );
  });

  test(`a status filter reads at most ${LIST_FILTER_READS} tasks per page: a short page whose token goes on`, async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const canceled = await acceptTask(f, clientId);
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    await Bun.sleep(3);
    const others = LIST_FILTER_READS + 100;
    for (let i = 0; i < others; i += 100) {
      await Promise.all(Array.from({ length: 100 }, () => acceptTask(f, clientId)));
    }
    const query = { profile: PROFILE, pageSize: 10, status: "TASK_STATE_CANCELED" as const };
    const first = await f.journal.list(clientId, query);
    expect(first.records).toEqual([]);
    expect(first.nextPageToken).not.toBe("");
    // an upper bound until the walk reaches the end: every task but those the filter has excluded so far
    expect(first.totalSize).toBe(others + 1 - LIST_FILTER_READS);
    const second = await f.journal.list(clientId, { ...query, pageToken: first.nextPageToken });
    expect(second.records.map((r) => r.id)).toEqual([canceled.taskId]);
    expect(second.nextPageToken).toBe("");
    expect(second.totalSize).toBe(1);
  });
});
