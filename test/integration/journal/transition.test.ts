// The transition script against a real redis-server: legal moves bump the revision and append the journal; a missing
// task, a stale fencing token and an illegal move are refused and change nothing; no transition leaves a terminal state.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Claim, RunLedger, type TransitionInput } from "../../../src/journal/index.ts";
import { TASK_STATES, type TaskState, TERMINAL_STATES } from "../../../src/protocol/index.ts";
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
  RETENTION,
  statusEvent,
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

async function working(): Promise<{ task: AcceptedTask; claim: Claim }> {
  const task = await acceptTask(f, clientId);
  const claim = await claimTask(f, task);
  expect(await move(f, claim, task, "TASK_STATE_WORKING")).toEqual({ ok: true, rev: 2 });
  return { task, claim };
}

/** Every write a worker could attempt: each state as a status change, and an artifact update. */
async function everyWrite(
  claim: Pick<Claim, "shard" | "taskId" | "fence" | "clientId" | "profile">,
  task: AcceptedTask,
) {
  const results = [];
  for (const state of TASK_STATES) results.push(await move(f, claim, task, state));
  results.push(
    await f.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate: { taskId: task.taskId, contextId: task.contextId, artifact: artifact("late") } },
      artifacts: [artifact("late")],
      ...RETENTION,
    }),
  );
  return results;
}

function artifact(text: string) {
  return { artifactId: `a-${text}`, parts: [{ text }] };
}

describe("transition", () => {
  test("returns the new revision; progress, artifacts and history are stored and journaled in order", async () => {
    const { task, claim } = await working();
    expect(await move(f, claim, task, "TASK_STATE_WORKING")).toEqual({ ok: true, rev: 3 });
    const reply = userMessage("partial answer", { role: "ROLE_AGENT" });
    const result = await f.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate: { taskId: task.taskId, contextId: task.contextId, artifact: artifact("one") } },
      artifacts: [artifact("one")],
      historyMessage: reply,
      ...RETENTION,
    });
    expect(result).toEqual({ ok: true, rev: 4 });
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(snap?.record).toMatchObject({ state: "TASK_STATE_WORKING", rev: 4, artifacts: [artifact("one")] });
    expect(snap?.record.history.at(-1)).toEqual(reply);
    // a status transition without a status keeps the stored one
    const before = snap?.record.status;
    await f.ledger.transition({
      claim,
      kind: "status",
      state: "TASK_STATE_WORKING",
      event: statusEvent(task, "TASK_STATE_WORKING"),
      ...RETENTION,
    });
    expect((await f.journal.snapshot(clientId, task.taskId))?.record.status).toEqual(before!);
    expect(await journalRevs(f, task)).toEqual([2, 3, 4, 5]);
    const entries = await f.journal.readJournal(clientId, task.taskId, "0-0");
    expect(entries.find((entry) => entry.rev === 4)?.event).toEqual({
      artifactUpdate: { taskId: task.taskId, contextId: task.contextId, artifact: artifact("one") },
    });
  });

  test("-1: a task or run that does not exist is missing", async () => {
    const claim = { shard: 0, taskId: "01NOSUCHTASK", fence: 1, clientId, profile: "echo" };
    const missing = { clientId, taskId: "01NOSUCHTASK", contextId: "c" };
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await move(f, claim, missing, "TASK_STATE_WORKING")).toEqual({ ok: false, reason: "missing" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("-2: a stale fencing token (the run was claimed again after its lease expired) changes nothing", async () => {
    const task = await acceptTask(f, clientId);
    const first = await claimTask(f, task, 30, "a1");
    await Bun.sleep(40);
    const second = await claimTask(f, task, 30_000, "a2");
    expect(second.fence).toBe(first.fence + 1);
    const before = await dumpUnder(f.redis, f.prefix);
    for (const result of await everyWrite(first, task)) expect(result).toEqual({ ok: false, reason: "stale" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    expect(await move(f, second, task, "TASK_STATE_WORKING")).toEqual({ ok: true, rev: 2 });
  });

  test("-2: an interrupted task's run is not running, so its old token cannot write", async () => {
    const { task, claim } = await working();
    expect(await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED")).toEqual({ ok: true, rev: 3 });
    const before = await dumpUnder(f.redis, f.prefix);
    for (const result of await everyWrite(claim, task)) expect(result).toEqual({ ok: false, reason: "stale" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });

  test("-3: SUBMITTED is never a target, from SUBMITTED or from WORKING", async () => {
    const task = await acceptTask(f, clientId);
    const claim = await claimTask(f, task);
    const before = await dumpUnder(f.redis, f.prefix);
    expect(await move(f, claim, task, "TASK_STATE_SUBMITTED")).toEqual({ ok: false, reason: "illegal" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    await move(f, claim, task, "TASK_STATE_WORKING");
    const after = await dumpUnder(f.redis, f.prefix);
    expect(await move(f, claim, task, "TASK_STATE_SUBMITTED")).toEqual({ ok: false, reason: "illegal" });
    expect(await move(f, claim, task, "TASK_STATE_UNSPECIFIED" as TaskState)).toEqual({ ok: false, reason: "illegal" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(after);
  });

  for (const terminal of TERMINAL_STATES) {
    test(`-3: no transition leaves ${terminal}, not even with the token that wrote it`, async () => {
      const { task, claim } = await working();
      expect(await move(f, claim, task, terminal)).toEqual({ ok: true, rev: 3 });
      const before = await dumpUnder(f.redis, f.prefix);
      for (const result of await everyWrite(claim, task)) expect(result).toEqual({ ok: false, reason: "illegal" });
      expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
      expect((await f.journal.snapshot(clientId, task.taskId))?.record.state).toBe(terminal);
    });
  }

  test("-3: a task canceled while queued cannot be written by the run's token", async () => {
    const task = await acceptTask(f, clientId);
    expect(await f.journal.cancel(clientId, task.taskId, "echo", RETENTION)).toEqual({ canceledNow: true });
    const before = await dumpUnder(f.redis, f.prefix);
    const claim = { shard: 0, taskId: task.taskId, fence: 0, clientId, profile: "echo" };
    for (const result of await everyWrite(claim, task)) expect(result).toEqual({ ok: false, reason: "illegal" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });
});

describe("transition: the client's interrupted-task limit", () => {
  test("-4: a task that would wait past its client's limit is refused with nothing written; a terminal move passes", async () => {
    const limited = await liveClient(f, { maxInterruptedTasks: 1 });
    const first = await acceptTask(f, limited);
    const second = await acceptTask(f, limited);
    // both accepted before the client had a task waiting: the accept's check could not stop the second
    const firstClaim = await claimTask(f, first);
    const secondClaim = await claimTask(f, second);
    expect(await move(f, firstClaim, first, "TASK_STATE_INPUT_REQUIRED")).toMatchObject({ ok: true });
    const before = await dumpUnder(f.redis, f.prefix);
    for (const state of ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"] as const) {
      expect(await move(f, secondClaim, second, state)).toEqual({ ok: false, reason: "interrupted-limit" });
    }
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    expect(await move(f, secondClaim, second, "TASK_STATE_FAILED")).toMatchObject({ ok: true });
    expect(await f.redis.smembers(f.keys.clientInterrupted(0, limited))).toEqual([first.taskId]);
  });
});

describe("transition: the task's size limit (maxTaskBytes)", () => {
  const update = (task: AcceptedTask, text: string) => ({
    artifactUpdate: {
      taskId: task.taskId,
      contextId: task.contextId,
      artifact: { artifactId: "a-big", parts: [{ text }] },
      append: true,
    },
  });
  const bytesOf = async (task: AcceptedTask) => Number(await f.redis.hget(f.keys.task(0, task.taskId), "bytes"));

  test("-5: a step whose content would take the task past the limit writes nothing; one that fits, or has none, passes", async () => {
    const { task, claim } = await working();
    const stored = await bytesOf(task);
    const limited = new RunLedger(f.redis, f.keys, { maxTaskBytes: stored + 1000 });
    const step = (extra: Partial<TransitionInput>) =>
      limited.transition({
        claim,
        kind: "status",
        state: "TASK_STATE_WORKING",
        status: { state: "TASK_STATE_WORKING", timestamp: new Date().toISOString() },
        event: statusEvent(task, "TASK_STATE_WORKING"),
        ...RETENTION,
        ...extra,
      });
    // 500 bytes of text fit; then neither updates, nor a history message, nor a whole list that grows the task do
    expect(await step({ artifactEvents: [update(task, "x".repeat(500))] })).toMatchObject({ ok: true });
    const before = await dumpUnder(f.redis, f.prefix);
    const big = "y".repeat(600);
    const refusals = [
      { artifactEvents: [update(task, big)] },
      { artifactEvents: [update(task, "y".repeat(300)), update(task, "y".repeat(300))] },
      { historyMessage: userMessage(big, { role: "ROLE_AGENT" }) },
      {
        state: "TASK_STATE_COMPLETED" as const,
        artifacts: [{ artifactId: "a-big", parts: [{ text: big.repeat(3) }] }],
      },
    ];
    for (const extra of refusals) expect(await step(extra)).toEqual({ ok: false, reason: "output-limit" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
    // a step without content passes whatever it adds to the status; so does one that shrinks what is stored
    const note = {
      state: "TASK_STATE_WORKING" as const,
      timestamp: new Date().toISOString(),
      message: userMessage(big),
    };
    expect(await step({ status: note })).toMatchObject({ ok: true });
    expect(await bytesOf(task)).toBeGreaterThan(stored + 1000);
    const compacted = [{ artifactId: "a-big", parts: [{ text: "x".repeat(500) }] }];
    expect(await step({ state: "TASK_STATE_COMPLETED", artifacts: compacted })).toMatchObject({ ok: true });
    expect((await f.journal.snapshot(clientId, task.taskId))?.record.artifacts).toEqual(compacted);
  });

  test("0 is no limit, and the client's stored-bytes counter still counts what was written", async () => {
    const { task, claim } = await working();
    const unlimited = new RunLedger(f.redis, f.keys, { maxTaskBytes: 0 });
    const before = await bytesOf(task);
    const event = update(task, "z".repeat(100_000));
    const written = await unlimited.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event,
      ...RETENTION,
    });
    expect(written).toMatchObject({ ok: true });
    expect(await bytesOf(task)).toBe(before + JSON.stringify(event).length + 1);
  });
});

describe("transition: streamed artifact updates", () => {
  const chunk = (task: AcceptedTask, text: string, append = true) => ({
    artifactUpdate: {
      taskId: task.taskId,
      contextId: task.contextId,
      artifact: { artifactId: "a-s", parts: [{ text }] },
      append,
    },
  });

  test("a step of n updates journals each at its own revision and appends each to the chunk store, not to `arts`", async () => {
    const { task, claim } = await working();
    const chunks = f.keys.artifactChunks(0, task.taskId);
    const first = [chunk(task, "Hel", false), chunk(task, "lo")];
    expect(
      await f.ledger.transition({
        claim,
        kind: "artifact",
        state: "TASK_STATE_WORKING",
        event: chunk(task, ", world"),
        artifactEvents: first,
        ...RETENTION,
      }),
    ).toEqual({ ok: true, rev: 5 });
    expect(await journalRevs(f, task)).toEqual([2, 3, 4, 5]);
    expect(await f.redis.hget(f.keys.task(0, task.taskId), "arts")).toBe("[]");
    const stored = [...first, chunk(task, ", world")].map((event) => `,${JSON.stringify(event)}`).join("");
    expect(await f.redis.get(chunks)).toBe(stored);
    // one more delta costs its own bytes only: the store grows by exactly that event
    expect(
      await f.ledger.transition({
        claim,
        kind: "artifact",
        state: "TASK_STATE_WORKING",
        event: chunk(task, "!"),
        ...RETENTION,
      }),
    ).toEqual({ ok: true, rev: 6 });
    expect(await f.redis.strlen(chunks)).toBe(stored.length + JSON.stringify(chunk(task, "!")).length + 1);
    const snap = await f.journal.snapshot(clientId, task.taskId);
    expect(snap?.record.artifacts).toEqual([{ artifactId: "a-s", parts: [{ text: "Hello, world!" }] }]);
  });

  test("a status step carries the updates before it; with the whole list it compacts the chunk store into `arts`", async () => {
    const { task, claim } = await working();
    await f.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: chunk(task, "par", false),
      ...RETENTION,
    });
    const whole = [{ artifactId: "a-s", parts: [{ text: "partial" }] }];
    const result = await move(f, claim, task, "TASK_STATE_COMPLETED", {
      artifactEvents: [chunk(task, "tial")],
      artifacts: whole,
    });
    expect(result).toEqual({ ok: true, rev: 5 });
    const rows = await f.redis.xrange(f.keys.journal(0, task.taskId), "-", "+");
    const events = rows.map(([, fields]) => JSON.parse(fields[fields.indexOf("ev") + 1] ?? "{}"));
    expect(events.at(-2)).toEqual(chunk(task, "tial"));
    expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(await f.redis.exists(f.keys.artifactChunks(0, task.taskId))).toBe(0);
    expect(JSON.parse((await f.redis.hget(f.keys.task(0, task.taskId), "arts")) ?? "")).toEqual(whole);
    expect((await f.journal.snapshot(clientId, task.taskId))?.record.artifacts).toEqual(whole);
  });

  test("-2: an INPUT_REQUIRED task (its run waits) refuses a step with updates, and nothing of it is written", async () => {
    const { task, claim } = await working();
    await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
    const before = await dumpUnder(f.redis, f.prefix);
    const refused = await move(f, claim, task, "TASK_STATE_COMPLETED", { artifactEvents: [chunk(task, "late")] });
    expect(refused).toEqual({ ok: false, reason: "stale" });
    expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
  });
});

describe("transition: the run's end in one step", () => {
  test("{rev, oldest deferred}: a step that ends the leg acknowledges and deletes its queue entry", async () => {
    const { task, claim } = await working();
    const queued = async () => (await f.redis.xrange(f.keys.queue(0), claim.entryId, claim.entryId)).length;
    expect(await queued()).toBe(1);
    // a progress note does not end the leg: the entry stays
    expect(await move(f, claim, task, "TASK_STATE_WORKING", { ackEntry: claim.entryId })).toEqual({ ok: true, rev: 3 });
    expect(await queued()).toBe(1);
    await f.redis.zadd(f.keys.clientDeferred(0, clientId), 5, "01OLDEST", 9, "01NEWER");
    const ended = await move(f, claim, task, "TASK_STATE_COMPLETED", { ackEntry: claim.entryId });
    expect(ended).toEqual({ ok: true, rev: 4, acked: true, oldestDeferred: "01OLDEST" });
    expect(await queued()).toBe(0);
    await f.redis.del(f.keys.clientDeferred(0, clientId));
  });

  test("an interrupted state ends the leg too; without deferred runs the oldest is null", async () => {
    const { task, claim } = await working();
    const ended = await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED", { ackEntry: claim.entryId });
    expect(ended).toEqual({ ok: true, rev: 3, acked: true, oldestDeferred: null });
    expect(await f.redis.xrange(f.keys.queue(0), claim.entryId, claim.entryId)).toEqual([]);
  });

  test("a refused end acknowledges nothing: the entry stays for its current owner", async () => {
    const { task, claim } = await working();
    const stale = { ...claim, fence: claim.fence - 1 };
    expect(await move(f, stale, task, "TASK_STATE_COMPLETED", { ackEntry: claim.entryId })).toEqual({
      ok: false,
      reason: "stale",
    });
    expect((await f.redis.xrange(f.keys.queue(0), claim.entryId, claim.entryId)).length).toBe(1);
  });
});
