// The cancel and snapshot scripts against a real redis-server: every documented reply, checked both as the script
// answers and as TaskJournal shows it, and that a refused or repeated cancel writes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { decodeTaskFields } from "../../../src/journal/index.ts";
import { CANCEL } from "../../../src/journal/lua/cancel.ts";
import { SNAPSHOT } from "../../../src/journal/lua/snapshot.ts";
import { TaskNotCancelableError, TaskNotFoundError } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  dumpUnder,
  journalRevs,
  liveClient,
  move,
  PROFILE,
  RETENTION,
} from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let clientId: string;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  clientId = await liveClient(f);
});
afterAll(async () => {
  await server.stop();
});

/** The cancel script called directly (as TaskJournal.cancel calls it), to see its raw reply. */
async function cancelScript(task: AcceptedTask, asClient = task.clientId): Promise<unknown> {
  const k = f.keys;
  const status = { state: "TASK_STATE_CANCELED", timestamp: new Date().toISOString() };
  return await CANCEL.run(
    f.redis,
    {
      task: k.task(0, task.taskId),
      run: k.run(0, task.taskId),
      journal: k.journal(0, task.taskId),
      clientTasks: k.clientTasks(0, asClient, PROFILE),
      clientActive: k.clientActive(0, asClient),
      profileActive: k.profileActive(0, PROFILE),
      pushConfigs: k.pushConfigs(0, task.taskId),
      pushOutbox: k.pushOutbox(0, task.taskId),
      pushReady: k.pushReady(0),
      clientRunning: k.clientRunning(0, asClient),
      clientInterrupted: k.clientInterrupted(0, asClient),
      inputDue: k.inputDue(0),
      purge: k.purge(0),
      bytes: k.bytes(0),
      clientDeferred: k.clientDeferred(0, asClient),
      deferred: k.deferredClients(0),
      contextTasks: k.contextTasks(0, asClient, PROFILE, task.contextId),
      taskStreams: k.taskStreams(0, task.taskId),
    },
    {
      clientId: asClient,
      status: JSON.stringify(status),
      event: JSON.stringify({ statusUpdate: { taskId: task.taskId, contextId: task.contextId, status } }),
      nowMs: Date.now(),
      retentionSeconds: RETENTION.retentionSeconds,
      journalRetentionSeconds: RETENTION.journalRetentionSeconds,
      eventsChannel: k.eventsChannel(),
      cancelChannel: k.cancelChannel(),
    },
  );
}

function listen(channel: string): { messages: string[]; close: () => void; ready: Promise<unknown> } {
  const subscriber = server.client();
  const messages: string[] = [];
  subscriber.on("message", (_channel: string, message: string) => messages.push(message));
  return { messages, close: () => subscriber.disconnect(), ready: subscriber.subscribe(channel) };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await Bun.sleep(5);
}

describe("cancel", () => {
  test("{1}: a queued task is canceled at once: state, journal, released slots, deletion scheduled, event", async () => {
    const task = await acceptTask(f, clientId);
    const events = listen(f.keys.eventsChannel());
    await events.ready;
    expect(await cancelScript(task)).toEqual({ ok: true, outcome: "canceled", rev: 2 });
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(snap?.record).toMatchObject({ state: "TASK_STATE_CANCELED", rev: 2 });
    expect(await journalRevs(f, task)).toEqual([2]);
    expect(await f.redis.hget(f.keys.run(0, task.taskId), "state")).toBe("done");
    expect(await f.redis.sismember(f.keys.clientActive(0, clientId), task.taskId)).toBe(0);
    expect(await f.redis.sismember(f.keys.profileActive(0, PROFILE), task.taskId)).toBe(0);
    // no TTL: the task is deleted by the retention pass, its journal first (journal retention 600 s, task 3600 s)
    for (const key of [f.keys.task(0, task.taskId), f.keys.run(0, task.taskId), f.keys.journal(0, task.taskId)]) {
      expect(await f.redis.ttl(key)).toBe(-1);
    }
    const purgeAt = Number(await f.redis.hget(f.keys.task(0, task.taskId), "purge"));
    const journalAt = Number(await f.redis.zscore(f.keys.purge(0), task.taskId));
    expect(purgeAt - journalAt).toBe((3600 - 600) * 1000);
    await until(() => events.messages.length > 0);
    expect(events.messages).toEqual([`${task.taskId} TASK_STATE_CANCELED 2`]);
    events.close();
  });

  test("{1}: an interrupted task is canceled at once through TaskJournal; it is no longer counted as interrupted", async () => {
    const task = await acceptTask(f, clientId);
    await move(f, await claimTask(f, task), task, "TASK_STATE_INPUT_REQUIRED");
    expect(await f.redis.sismember(f.keys.clientInterrupted(0, clientId), task.taskId)).toBe(1);
    expect(await f.redis.zscore(f.keys.inputDue(0), task.taskId)).not.toBeNull();
    expect(await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION)).toEqual({ canceledNow: true });
    expect((await f.journal.snapshot(clientId, task.taskId))?.record.state).toBe("TASK_STATE_CANCELED");
    expect(await f.redis.sismember(f.keys.clientInterrupted(0, clientId), task.taskId)).toBe(0);
    expect(await f.redis.zscore(f.keys.inputDue(0), task.taskId)).toBeNull();
  });

  test("{2}: a running task gets a cancel request on its run and the cancel channel; the task is unchanged", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    const runId = await f.redis.hget(f.keys.run(0, task.taskId), "id");
    const cancels = listen(f.keys.cancelChannel());
    await cancels.ready;
    const taskBefore = await f.redis.hgetall(f.keys.task(0, task.taskId));
    expect(await cancelScript(task)).toEqual({ ok: true, outcome: "requested", rev: 2 });
    expect(await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION)).toEqual({ canceledNow: false });
    expect(await f.redis.hgetall(f.keys.task(0, task.taskId))).toEqual(taskBefore);
    expect(await f.redis.hget(f.keys.run(0, task.taskId), "cancel")).toBe("1");
    await until(() => cancels.messages.length >= 2);
    expect(cancels.messages).toEqual([runId ?? "", runId ?? ""]);
    cancels.close();
  });

  test("{0}: an already canceled task is returned as is and nothing is written", async () => {
    const task = await acceptTask(f, clientId);
    await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION);
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await cancelScript(task)).toEqual({ ok: true, outcome: "alreadyCanceled", rev: 2 });
    expect(await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION)).toEqual({ canceledNow: true });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("-1: another client's task is not found, and so are another profile's and an unknown one", async () => {
    const task = await acceptTask(f, clientId);
    const stranger = await liveClient(f);
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await cancelScript(task, stranger)).toEqual({ ok: false, code: "notFound" });
    await expect(f.journal.cancel(stranger, task.taskId, PROFILE, RETENTION)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(f.journal.cancel(clientId, task.taskId, "other", RETENTION)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(f.journal.cancel(clientId, "01NOSUCH", PROFILE, RETENTION)).rejects.toBeInstanceOf(TaskNotFoundError);
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  for (const terminal of ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"] as const) {
    test(`-2: a ${terminal} task is not cancelable and nothing is written`, async () => {
      const task = await acceptTask(f, clientId);
      await move(f, await claimTask(f, task), task, terminal);
      const before = await dumpUnder(f.redis, f.prefix);
      expect(await cancelScript(task)).toEqual({ ok: false, code: "notCancelable" });
      const error = await f.journal.cancel(clientId, task.taskId, PROFILE, RETENTION).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TaskNotCancelableError);
      expect((error as TaskNotCancelableError).reason).toBe("TASK_NOT_CANCELABLE");
      expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    });
  }
});

describe("snapshot", () => {
  test("returns the task's fields and the id of the journal entry at the same revision", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    await move(f, claim, task, "TASK_STATE_WORKING");
    const reply = await SNAPSHOT.run(
      f.redis,
      {
        task: f.keys.task(0, task.taskId),
        journal: f.keys.journal(0, task.taskId),
        chunks: f.keys.artifactChunks(0, task.taskId),
      },
      {},
    );
    expect(decodeTaskFields(task.taskId, reply?.stored.fields ?? []).rev).toBe(2);
    const [last] = await f.redis.xrevrange(f.keys.journal(0, task.taskId), "+", "-", "COUNT", 1);
    expect(reply?.cursor).toBe(last?.[0] ?? "missing");
    const snap = await f.journal.snapshot(clientId, task.taskId, PROFILE);
    expect(snap).toMatchObject({ cursor: last?.[0], record: { id: task.taskId, rev: 2, state: "TASK_STATE_WORKING" } });
  });

  test("{}: no task; and TaskJournal hides another client's or another profile's task", async () => {
    const missing = await SNAPSHOT.run(
      f.redis,
      { task: f.keys.task(0, "nope"), journal: f.keys.journal(0, "nope"), chunks: f.keys.artifactChunks(0, "nope") },
      {},
    );
    expect(missing).toBeUndefined();
    expect(await f.journal.snapshot(clientId, "nope")).toBeUndefined();
    const task = await acceptTask(f, clientId);
    expect(await f.journal.snapshot(await liveClient(f), task.taskId)).toBeUndefined();
    expect(await f.journal.snapshot(clientId, task.taskId, "other")).toBeUndefined();
  });

  test("a task whose journal has expired has the cursor 0-0", async () => {
    const task = await acceptTask(f, clientId);
    await f.redis.del(f.keys.journal(0, task.taskId));
    expect((await f.journal.snapshot(clientId, task.taskId))?.cursor).toBe("0-0");
  });
});
