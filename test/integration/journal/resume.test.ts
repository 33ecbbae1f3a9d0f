// The resume script against a real redis-server: a follow-up to an interrupted task re-queues the same run; each
// refusal code maps to its error and leaves every key and value as it was.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PushConfigs } from "../../../src/journal/index.ts";
import {
  CapacityError,
  InvalidParamsError,
  MessageIdReusedError,
  TaskNotFoundError,
  type TaskState,
  UnauthenticatedError,
  UnsupportedOperationError,
  WorkerUnavailableError,
} from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
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
  redisSeconds,
} from "./helpers.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

async function interrupted(
  f: JournalFixture,
  clientId: string,
  state: TaskState = "TASK_STATE_INPUT_REQUIRED",
): Promise<AcceptedTask> {
  const task = await acceptTask(f, clientId);
  const claim = await claimTask(f, task);
  expect(await move(f, claim, task, "TASK_STATE_WORKING")).toEqual({ ok: true, rev: 2 });
  expect(await move(f, claim, task, state)).toEqual({ ok: true, rev: 3 });
  return task;
}

async function expectUnchanged(f: JournalFixture, call: () => Promise<unknown>): Promise<unknown> {
  const before = await dumpUnder(f.redis, f.prefix);
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeDefined();
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  return error;
}

describe("resume", () => {
  test("{1}: re-queues the same run, appends the message, bumps the revision and publishes the task id with its new state and revision", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const runBefore = await f.redis.hgetall(f.keys.run(0, task.taskId));
    const subscriber = server.client();
    const published: string[] = [];
    subscriber.on("message", (_channel: string, message: string) => published.push(message));
    await subscriber.subscribe(f.keys.eventsChannel());
    const message = userMessage("here is the input");
    const resumed = await f.journal.resume({
      clientId,
      profile: PROFILE,
      profileQuota: 0,
      taskId: task.taskId,
      message,
    });
    expect(resumed).toEqual({ created: true, taskId: task.taskId });
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(snap?.record.state).toBe("TASK_STATE_SUBMITTED");
    expect(snap?.record.rev).toBe(4);
    expect(snap?.record.history.at(-1)).toEqual({ ...message, taskId: task.taskId, contextId: task.contextId });
    expect(snap?.record.history.length).toBe(2);
    expect(await journalRevs(f, task)).toEqual([2, 3, 4]);
    const run = await f.redis.hgetall(f.keys.run(0, task.taskId));
    expect(run).toMatchObject({ id: runBefore.id, state: "queued", tries: "0", fence: "1", cancel: "0" });
    expect(run.entry).not.toBe(runBefore.entry);
    expect(await f.redis.sismember(f.keys.clientActive(0, clientId), task.taskId)).toBe(1);
    expect(await f.redis.sismember(f.keys.profileActive(0, PROFILE), task.taskId)).toBe(1);
    const claim = await claimTask(f, task);
    expect(claim.fence).toBe(2);
    expect(claim.state).toBe("TASK_STATE_SUBMITTED");
    for (let i = 0; i < 50 && published.length === 0; i++) await Bun.sleep(10);
    expect(published).toEqual([`${task.taskId} TASK_STATE_SUBMITTED 4`]);
    subscriber.disconnect();
  });

  test("{1}: an AUTH_REQUIRED task resumes too", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId, "TASK_STATE_AUTH_REQUIRED");
    const message = userMessage("token granted");
    await f.journal.resume({ clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message });
    expect((await f.journal.snapshot(clientId, task.taskId))?.record.state).toBe("TASK_STATE_SUBMITTED");
  });

  test("{0}: the same follow-up again returns the task and writes nothing", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const message = userMessage("once");
    const input = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message };
    await f.journal.resume(input);
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await f.journal.resume(input)).toEqual({ created: false, taskId: task.taskId });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("-1: no live worker is WORKER_UNAVAILABLE", async () => {
    const f = journalFixture(server, { livenessSeconds: 10 });
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    await f.redis.set(f.keys.live(0), (await redisSeconds(f.redis)) - 11);
    const input = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message: userMessage("x") };
    expect(await expectUnchanged(f, () => f.journal.resume(input))).toBeInstanceOf(WorkerUnavailableError);
  });

  test("-2: a client at its limit is refused with the client-limit reason", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f, { limit: 1 });
    const task = await interrupted(f, clientId);
    await acceptTask(f, clientId);
    const input = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message: userMessage("x") };
    const error = await expectUnchanged(f, () => f.journal.resume(input));
    expect(error).toBeInstanceOf(CapacityError);
    expect((error as CapacityError).reason).toBe("CLIENT_TASK_LIMIT_EXCEEDED");
  });

  test("-3: a full profile quota is refused with the quota reason", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    await acceptTask(f, await liveClient(f));
    const input = { clientId, profile: PROFILE, profileQuota: 1, taskId: task.taskId, message: userMessage("x") };
    const error = await expectUnchanged(f, () => f.journal.resume(input));
    expect((error as CapacityError).reason).toBe("PROFILE_QUOTA_EXCEEDED");
  });

  test("-4: a messageId reused with other content, or already used for another task, is MESSAGE_ID_REUSED", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const other = await interrupted(f, clientId);
    const message = userMessage("first");
    await f.journal.resume({ clientId, profile: PROFILE, profileQuota: 0, taskId: other.taskId, message });
    const sameIdOtherTask = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message };
    expect(await expectUnchanged(f, () => f.journal.resume(sameIdOtherTask))).toBeInstanceOf(MessageIdReusedError);
    const changed = { ...sameIdOtherTask, taskId: other.taskId, message: { ...message, parts: [{ text: "other" }] } };
    expect(await expectUnchanged(f, () => f.journal.resume(changed))).toBeInstanceOf(MessageIdReusedError);
  });

  test("-5: a revoked client is UNAUTHENTICATED", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    await f.clients.revoke(clientId);
    const input = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message: userMessage("x") };
    expect(await expectUnchanged(f, () => f.journal.resume(input))).toBeInstanceOf(UnauthenticatedError);
  });

  test("-6: another client's task, another profile's task and an unknown task are TASK_NOT_FOUND", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const stranger = await liveClient(f);
    const task = await interrupted(f, clientId);
    const base = { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId };
    for (const input of [
      { ...base, clientId: stranger },
      { ...base, profile: "other" },
      { ...base, taskId: "01NOSUCHTASK" },
    ]) {
      const error = await expectUnchanged(f, () => f.journal.resume({ ...input, message: userMessage("x") }));
      expect(error).toBeInstanceOf(TaskNotFoundError);
    }
  });

  test("-7: a terminal task accepts no further message; -8: a submitted or working one is not waiting", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const done = await acceptTask(f, clientId);
    await move(f, await claimTask(f, done), done, "TASK_STATE_COMPLETED");
    const submitted = await acceptTask(f, clientId);
    const working = await acceptTask(f, clientId);
    await move(f, await claimTask(f, working), working, "TASK_STATE_WORKING");
    const terminal = await expectUnchanged(f, () =>
      f.journal.resume({ clientId, profile: PROFILE, profileQuota: 0, taskId: done.taskId, message: userMessage("x") }),
    );
    expect(terminal).toBeInstanceOf(UnsupportedOperationError);
    expect((terminal as Error).message).toContain("terminal");
    for (const task of [submitted, working]) {
      const busy = await expectUnchanged(f, () =>
        f.journal.resume({
          clientId,
          profile: PROFILE,
          profileQuota: 0,
          taskId: task.taskId,
          message: userMessage("y"),
        }),
      );
      expect(busy).toBeInstanceOf(UnsupportedOperationError);
      expect((busy as Error).message).toContain("not waiting");
    }
  });

  test("-9: an inline push config past the task's limit is PUSH_CONFIG_LIMIT_EXCEEDED and nothing is written", async () => {
    const f = journalFixture(server, { maxPushConfigsPerTask: 1 });
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const hook = (id: string) => ({ id, taskId: task.taskId, url: `https://hooks.example/${id}` });
    await new PushConfigs(f.redis, f.keys).create(clientId, PROFILE, hook("a"), 1);
    const resume = (id: string) =>
      f.journal.resume({
        clientId,
        profile: PROFILE,
        profileQuota: 0,
        taskId: task.taskId,
        message: userMessage("with a hook", { contextId: task.contextId }),
        pushConfig: hook(id),
      });
    const error = await expectUnchanged(f, () => resume("b"));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error).toMatchObject({ reason: "PUSH_CONFIG_LIMIT_EXCEEDED" });
    // replacing the config the task has is no new config: the follow-up is taken
    expect((await resume("a")).created).toBe(true);
  });

  test("-12: a message whose contextId is not the task's is INVALID_PARAMS and nothing is written", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const error = await expectUnchanged(f, () =>
      f.journal.resume({
        clientId,
        profile: PROFILE,
        profileQuota: 0,
        taskId: task.taskId,
        message: userMessage("elsewhere", { contextId: "another-context" }),
      }),
    );
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).violations[0]?.field).toBe("message.contextId");
  });

  test("-13: a follow-up past the task's history limit is TASK_HISTORY_LIMIT_EXCEEDED and nothing is written", async () => {
    const f = journalFixture(server, { maxHistoryBytes: 2_000 });
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const followUp = (text: string) =>
      f.journal.resume({
        clientId,
        profile: PROFILE,
        profileQuota: 0,
        taskId: task.taskId,
        message: userMessage(text, { contextId: task.contextId }),
      });
    const error = await expectUnchanged(f, () => followUp("x".repeat(2_000)));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect(error).toMatchObject({ reason: "TASK_HISTORY_LIMIT_EXCEEDED" });
    // a follow-up that fits is taken, and the history then holds both messages within the limit
    expect((await followUp("y".repeat(500))).created).toBe(true);
    const history = await f.redis.hget(f.keys.task(0, task.taskId), "hist");
    expect(JSON.parse(history ?? "[]")).toHaveLength(2);
    expect(history?.length).toBeLessThanOrEqual(2_000);
  });

  test("{1, taskId, rev, fields}: asked for the task, the reply carries it as written (one round trip, no read after)", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const message = userMessage("the answer", { contextId: task.contextId });
    const resumed = await f.journal.resume(
      { clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message },
      true,
    );
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(resumed.created).toBe(true);
    expect(resumed.record).toEqual(snap?.record);
    expect(resumed.record?.rev).toBe(4);
    expect(resumed.record?.history.at(-1)).toEqual({ ...message, taskId: task.taskId });
    // the journal event is built by the script from the status sent once
    const [last] = await f.redis.xrevrange(f.keys.journal(0, task.taskId), "+", "-", "COUNT", 1);
    expect(JSON.parse(last?.[1][3] ?? "{}")).toEqual({
      statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: snap?.record.status },
    });
  });

  test("the messageId dedup is per profile: a resend to another profile finds no task there", async () => {
    const f = journalFixture(server);
    const clientId = await liveClient(f);
    const task = await interrupted(f, clientId);
    const message = userMessage("follow-up");
    await f.journal.resume({ clientId, profile: PROFILE, profileQuota: 0, taskId: task.taskId, message });
    const error = await f.journal
      .resume({ clientId, profile: "other", profileQuota: 0, taskId: task.taskId, message: { ...message } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });
});
