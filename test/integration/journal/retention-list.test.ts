// Retention and the task index against a real redis-server: TTLs at terminal states, active slots released at
// terminal and interrupted states, and ListTasks (order, pages, filters, tokens) through TaskJournal.list.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Buffer } from "node:buffer";
import { DueTasks, LIST_FILTER_READS, type ListQuery } from "../../../src/journal/index.ts";
import { InvalidParamsError, TASK_STATES } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
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

  test("a status filter pages through the state's own index: a match behind many others is on the first page", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const canceled = await acceptTask(f, clientId);
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    await Bun.sleep(3);
    await acceptMany(f, clientId, LIST_FILTER_READS + 100);
    const query = { profile: PROFILE, pageSize: 10, status: "TASK_STATE_CANCELED" as const };
    const page = await f.journal.list(clientId, query);
    expect(page.records.map((r) => r.id)).toEqual([canceled.taskId]);
    expect(page.nextPageToken).toBe("");
    expect(page.totalSize).toBe(1);
    const submitted = await f.journal.list(clientId, { ...query, status: "TASK_STATE_SUBMITTED", pageSize: 100 });
    expect(submitted.records).toHaveLength(100);
    expect(submitted.totalSize).toBe(LIST_FILTER_READS + 100);
    expect(submitted.records.every((r) => r.status.state === "TASK_STATE_SUBMITTED")).toBe(true);
  });

  test(`while a task is in no state index, a status filter reads states: at most ${LIST_FILTER_READS} a page`, async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const canceled = await acceptTask(f, clientId);
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    await Bun.sleep(3);
    const others = LIST_FILTER_READS + 100;
    await acceptMany(f, clientId, others);
    // as a task whose status last changed before state indexes existed: in the client's index only
    await f.redis.zrem(f.keys.stateTasks(0, clientId, PROFILE, "TASK_STATE_CANCELED"), canceled.taskId);
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

  describe("maxBytes", () => {
    /** Every page of a query, followed to its end: the ids of each page, and each page's totalSize. */
    async function pages(
      f: JournalFixture,
      clientId: string,
      query: Omit<ListQuery, "pageToken">,
    ): Promise<{ ids: string[][]; totals: number[] }> {
      const ids: string[][] = [];
      const totals: number[] = [];
      let token: string | undefined;
      do {
        const page = await f.journal.list(clientId, { ...query, pageToken: token });
        ids.push(page.records.map((r) => r.id));
        totals.push(page.totalSize);
        token = page.nextPageToken === "" ? undefined : page.nextPageToken;
      } while (token !== undefined && ids.length < 20);
      return { ids, totals };
    }

    /** `count` tasks with a message of `size` characters, oldest first, in `contextId` when given. */
    async function acceptLarge(f: JournalFixture, clientId: string, count: number, size: number, contextId?: string) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const message = userMessage("x".repeat(size), contextId ? { contextId } : {});
        ids.push((await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message })).taskId);
        await Bun.sleep(2);
      }
      return ids;
    }

    test("a page ends before the task that would pass the bound, and its token goes on from there", async () => {
      const f = journalFixture(server);
      const clientId = await liveClient(f);
      const ids = await acceptLarge(f, clientId, 7, 3_000);
      // each task's history holds a little over 3,000 bytes: two fit in 7,000, a third does not
      const { ids: listed, totals } = await pages(f, clientId, { profile: PROFILE, pageSize: 10, maxBytes: 7_000 });
      expect(listed.map((page) => page.length)).toEqual([2, 2, 2, 1]);
      expect(listed.flat()).toEqual([...ids].reverse());
      expect(totals).toEqual([7, 7, 7, 7]);
      // without the bound, or with one the client's whole store fits in, one page holds them all
      for (const maxBytes of [undefined, 0, 1_000_000]) {
        const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 10, maxBytes });
        expect(page.records.length).toBe(7);
        expect(page.nextPageToken).toBe("");
      }
    });

    test("a task larger than the bound is a page of its own", async () => {
      const f = journalFixture(server);
      const clientId = await liveClient(f);
      const ids = await acceptLarge(f, clientId, 3, 5_000);
      const { ids: listed } = await pages(f, clientId, { profile: PROFILE, pageSize: 10, maxBytes: 1_000 });
      expect(listed).toEqual([...ids].reverse().map((id) => [id]));
    });

    test("artifacts count only when the page reads them", async () => {
      const f = journalFixture(server);
      const clientId = await liveClient(f);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const task = await acceptTask(f, clientId);
        const claim = await claimTask(f, task);
        const artifact = { artifactId: `a-${i}`, parts: [{ text: "y".repeat(4_000) }] };
        expect((await emitArtifact(f, claim, task, artifact)).ok).toBe(true);
        ids.push(task.taskId);
        await Bun.sleep(2);
      }
      const query = { profile: PROFILE, pageSize: 10, maxBytes: 9_000 };
      const without = await pages(f, clientId, query);
      expect(without.ids).toEqual([[...ids].reverse()]);
      const withArtifacts = await pages(f, clientId, { ...query, includeArtifacts: true });
      expect(withArtifacts.ids.map((page) => page.length)).toEqual([2, 2]);
      expect(withArtifacts.ids.flat()).toEqual([...ids].reverse());
    });

    test("a status filter's scan cut by the bound counts only the exclusions before the cut", async () => {
      const f = journalFixture(server);
      const clientId = await liveClient(f);
      // in one context, by status timestamp, oldest first: COMPLETED, WORKING, COMPLETED, WORKING, …: the scan for
      // COMPLETED, newest first, excludes a WORKING task before each match
      const ids = await acceptLarge(f, clientId, 6, 3_000, "ctx-big");
      const done: string[] = [];
      for (const [i, taskId] of ids.entries()) {
        const task = { clientId, taskId, contextId: "ctx-big" };
        await move(f, await claimTask(f, task), task, i % 2 === 0 ? "TASK_STATE_COMPLETED" : "TASK_STATE_WORKING");
        if (i % 2 === 0) done.push(taskId);
        await Bun.sleep(2);
      }
      const query = {
        profile: PROFILE,
        pageSize: 10,
        contextId: "ctx-big",
        status: "TASK_STATE_COMPLETED" as const,
        maxBytes: 7_000,
      };
      const { ids: listed, totals } = await pages(f, clientId, query);
      expect(listed.flat()).toEqual([...done].reverse());
      expect(listed.map((page) => page.length)).toEqual([2, 1]);
      // an upper bound until the scan reaches the end, exact there: the first page's token counts the two WORKING
      // tasks before its cut, not the one after it, which the next page examines and counts
      expect(totals).toEqual([4, 3]);
    });
  });

  test("each status change moves a task between state indexes, and its deletion takes it out", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const due = new DueTasks(f.redis, f.keys);
    const [done, resumed, canceled, started, expired] = await Promise.all(
      Array.from({ length: 5 }, () => acceptTask(f, clientId)),
    );
    if (!done || !resumed || !canceled || !started || !expired) throw new Error("five tasks were accepted");
    await expectListedByState(f, clientId);

    const doneClaim = await claimTask(f, done);
    await move(f, doneClaim, done, "TASK_STATE_WORKING");
    await expectListedByState(f, clientId);
    await move(f, doneClaim, done, "TASK_STATE_COMPLETED", { retentionSeconds: 0, journalRetentionSeconds: 0 });
    await move(f, await claimTask(f, resumed), resumed, "TASK_STATE_INPUT_REQUIRED");
    await f.journal.cancel(clientId, canceled.taskId, PROFILE, RETENTION);
    await expectListedByState(f, clientId);

    await f.journal.resume({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      taskId: resumed.taskId,
      message: userMessage("more", { contextId: resumed.contextId }),
    });
    // a run's start written with its first output moves the task to WORKING in the same step
    const entry = await f.redis.hget(f.keys.run(0, started.taskId), "entry");
    const claim = await f.ledger.claim(0, started.taskId, entry ?? "", "a1", 30_000, 3, clientId, true);
    if (typeof claim === "string") throw new Error(claim);
    const status = { state: "TASK_STATE_WORKING" as const, timestamp: new Date().toISOString() };
    const task = { taskId: started.taskId, contextId: started.contextId };
    const artifact = { artifactId: "a", parts: [{ text: "first" }] };
    expect(
      await f.ledger.transition({
        claim,
        kind: "artifact",
        state: "TASK_STATE_WORKING",
        event: { artifactUpdate: { ...task, artifact } },
        lead: { status, event: { statusUpdate: { ...task, status } } },
        ...RETENTION,
      }),
    ).toMatchObject({ ok: true });
    await move(f, await claimTask(f, expired), expired, "TASK_STATE_AUTH_REQUIRED");
    await expectListedByState(f, clientId);

    // the input timeout fails the interrupted task; the retention deletes the finished one
    await f.redis.zadd(f.keys.inputDue(0), (await redisMs(f.redis)) - 1, expired.taskId);
    expect(await due.expireInputs(0, 10, () => ({ ...RETENTION, inputTimeoutSeconds: 0 }))).toBe(1);
    await f.redis.hset(f.keys.task(0, done.taskId), "purge", (await redisMs(f.redis)) - 1);
    await f.redis.zadd(f.keys.purge(0), (await redisMs(f.redis)) - 1, done.taskId);
    expect((await due.purge(0, 10)).tasks).toBe(1);
    const states = await expectListedByState(f, clientId);
    expect(states).toEqual({
      [resumed.taskId]: "TASK_STATE_SUBMITTED",
      [canceled.taskId]: "TASK_STATE_CANCELED",
      [started.taskId]: "TASK_STATE_WORKING",
      [expired.taskId]: "TASK_STATE_FAILED",
    });
  });
});

/** Accepts `count` tasks for the client, 100 at a time. */
async function acceptMany(f: JournalFixture, clientId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, count - i) }, () => acceptTask(f, clientId)));
  }
}

/**
 * Lists the client's tasks once per state and expects each task of the client's index under its own state only, and
 * the state indexes to hold as many tasks as the client's index. Returns each task's state.
 */
async function expectListedByState(f: JournalFixture, clientId: string): Promise<Record<string, string>> {
  const listed: Record<string, string[]> = {};
  for (const status of TASK_STATES) {
    const page = await f.journal.list(clientId, { profile: PROFILE, pageSize: 100, status });
    expect(page.totalSize).toBe(page.records.length);
    for (const record of page.records) listed[record.id] = [...(listed[record.id] ?? []), status];
  }
  const ids = await f.redis.zrange(f.keys.clientTasks(0, clientId, PROFILE), 0, -1);
  const states: Record<string, string> = {};
  for (const id of ids) states[id] = (await f.redis.hget(f.keys.task(0, id), "state")) ?? "gone";
  expect(Object.fromEntries(Object.entries(listed).map(([id, at]) => [id, at.join(",")]))).toEqual(states);
  let indexed = 0;
  for (const status of TASK_STATES) indexed += await f.redis.zcard(f.keys.stateTasks(0, clientId, PROFILE, status));
  expect(indexed).toBe(ids.length);
  return states;
}
