// A change notice names the task's new state and revision, so a blocking wait reads the task only when the state can
// end it (WORKING progress costs no read; COMPLETED does), a revision the followers have seen costs no read, and under
// load every wait ends on its own notice (no safety check needed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { JournalTail, type KnownTask } from "../../../src/gateway/index.ts";
import { type Snapshot, type TaskHead, TaskJournal } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { INTERRUPTED_STATES, type TaskState, TERMINAL_STATES } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  type AcceptedTask,
  acceptTask,
  claimTask,
  liveClient,
  move,
  PROFILE,
  waitingLeases,
} from "../journal/helpers.ts";

class CountingJournal extends TaskJournal {
  reads = 0;
  headReads = 0;
  override async snapshot(clientId: string, taskId: string, profile?: string): Promise<Snapshot | undefined> {
    this.reads += 1;
    return await super.snapshot(clientId, taskId, profile);
  }
  override async head(clientId: string, taskId: string): Promise<TaskHead | undefined> {
    this.headReads += 1;
    return await super.head(clientId, taskId);
  }
}

const SETTLED: ReadonlySet<TaskState> = new Set<TaskState>([...TERMINAL_STATES, ...INTERRUPTED_STATES]);

let server: TestRedis;
let f: JournalFixture;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
});
afterAll(async () => {
  await server.stop();
});

/** A tail whose safety check never runs during a test: only notices can wake a wait. */
async function startTail(gatewayId?: string): Promise<{ tail: JournalTail; journal: CountingJournal }> {
  const journal = new CountingJournal(f.redis, f.keys, {
    livenessSeconds: 120,
    dedupSeconds: 60,
    retryAfterSeconds: 5,
  });
  const tail = new JournalTail({
    subscriber: server.client(),
    journal,
    keys: f.keys,
    logger: createLogger("test", "silent"),
    safetyIntervalMs: 600_000,
    ...(gatewayId ? { gatewayId } : {}),
  });
  await tail.start();
  return { tail, journal };
}

test("a blocking wait reads the task for a settling state only, not for each WORKING step", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  const waiting = tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
  });
  while (journal.reads === 0) await Bun.sleep(5); // the wait's first read
  expect(journal.reads).toBe(1);
  const claim = await claimTask(f, task);
  for (let i = 0; i < 5; i++) await move(f, claim, task, "TASK_STATE_WORKING");
  await Bun.sleep(100);
  expect(journal.reads).toBe(1);
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  const outcome = await waiting;
  expect(outcome.kind).toBe("met");
  expect(journal.reads).toBe(2);
  await tail.stop();
});

test("a wait hears of the notice that ends it as its read is sent, once, and of no WORKING step", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  const heard: { state: TaskState; readsBefore: number }[] = [];
  const waiting = tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    onNotice: (state) => heard.push({ state, readsBefore: journal.reads }),
  });
  const claim = await claimTask(f, task);
  for (let i = 0; i < 3; i++) await move(f, claim, task, "TASK_STATE_WORKING");
  await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
  const outcome = await waiting;
  expect(outcome.kind).toBe("met");
  // called before the read that ended the wait was counted: a write issued there shares that read's round trip
  expect(heard).toEqual([{ state: "TASK_STATE_INPUT_REQUIRED", readsBefore: journal.reads - 1 }]);
  await tail.stop();
});

test("a wait whose accept took its leases is answered by the run's end on this gateway's channel, with no read", async () => {
  const { tail, journal } = await startTail("gw-a");
  const clientId = await liveClient(f);
  const waiting = waitingLeases(f, clientId, "gw-a:r1");
  const mark = tail.mark();
  const accepted = await f.journal.accept({
    clientId,
    profile: PROFILE,
    profileQuota: 0,
    message: userMessage("hi"),
    waiting,
  });
  const record = accepted.record;
  if (!record) throw new Error("the accept returned no task");
  const task: AcceptedTask = { clientId, taskId: accepted.taskId, contextId: record.contextId };
  const heard: TaskState[] = [];
  const waitingFor = tail.waitUntil(clientId, task.taskId, (r) => SETTLED.has(r.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    known: { record, mark },
    onNotice: (state) => heard.push(state),
    replyMember: waiting.member,
  });
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_WORKING");
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  const outcome = await waitingFor;
  expect(outcome).toMatchObject({
    kind: "met",
    answered: true,
    snapshot: { record: { state: "TASK_STATE_COMPLETED" } },
  });
  expect(journal.reads).toBe(0);
  expect(heard).toEqual([]);
  expect(await f.redis.zscore(f.keys.waiting(), waiting.member)).toBeNull();
  // another gateway's reply channel is not this one's: its waits read, as before
  const other = await startTail("gw-b");
  const second = await f.journal.accept({
    clientId,
    profile: PROFILE,
    profileQuota: 0,
    message: userMessage("hi"),
    waiting: { ...waiting, member: "gw-a:r2" },
  });
  const secondTask: AcceptedTask = { clientId, taskId: second.taskId, contextId: second.record?.contextId ?? "" };
  const otherWait = other.tail.waitUntil(clientId, secondTask.taskId, (r) => SETTLED.has(r.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    replyMember: "gw-a:r2",
  });
  const secondClaim = await claimTask(f, secondTask);
  await move(f, secondClaim, secondTask, "TASK_STATE_COMPLETED");
  const otherOutcome = await otherWait;
  expect(otherOutcome.kind).toBe("met");
  expect("answered" in otherOutcome).toBe(false);
  expect(other.journal.reads).toBe(2);
  await other.tail.stop();
  await tail.stop();
});

test("a notice of a revision the followers have read already costs no read", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  const seen: number[] = [];
  let wake: () => void = () => {};
  const unfollow = tail.follow({
    clientId,
    taskId: task.taskId,
    onSnapshot: (snapshot) => {
      seen.push(snapshot?.record.rev ?? -1);
      wake();
    },
  });
  await new Promise<void>((resolve) => {
    wake = resolve;
    if (seen.length > 0) resolve();
  });
  expect(seen).toEqual([1]);
  // an old revision (a duplicate or late notice), then a real change: only the change is read
  await f.redis.publish(f.keys.eventsChannel(), `${task.taskId} TASK_STATE_SUBMITTED 1`);
  const claim = await claimTask(f, task);
  const changed = new Promise<void>((resolve) => {
    wake = resolve;
  });
  await move(f, claim, task, "TASK_STATE_WORKING");
  await changed;
  expect(seen).toEqual([1, 2]);
  expect(journal.reads).toBe(2);
  unfollow();
  await tail.stop();
});

test("a task only streams follow is read by its head, never whole; a blocking wait that joins gets its snapshot", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  const heads: number[] = [];
  let wake: () => void = () => {};
  const next = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });
  const first = next();
  const unfollow = tail.follow({
    clientId,
    taskId: task.taskId,
    onHead: (head) => {
      heads.push(head?.rev ?? -1);
      wake();
    },
  });
  await first;
  const claim = await claimTask(f, task);
  const changed = next();
  await move(f, claim, task, "TASK_STATE_WORKING");
  await changed;
  expect(heads).toEqual([1, 2]);
  expect({ reads: journal.reads, headReads: journal.headReads }).toEqual({ reads: 0, headReads: 2 });
  const waiting = tail.waitUntil(clientId, task.taskId, (record) => record.state === "TASK_STATE_COMPLETED", {
    timeoutMs: 10_000,
    states: SETTLED,
  });
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  const outcome = await waiting;
  expect(outcome.kind).toBe("met");
  if (outcome.kind === "met") expect(outcome.snapshot.record.rev).toBe(3);
  // the whole reads the wait asked for served the stream too: no head read besides them
  expect(journal.reads).toBeGreaterThanOrEqual(1);
  expect(journal.headReads).toBe(2);
  expect(heads.at(-1)).toBe(3);
  unfollow();
  await tail.stop();
});

test("under load every blocking wait ends on its own notice, with one read for the state that ends it", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const count = 200;
  const tasks = await Promise.all(Array.from({ length: count }, () => acceptTask(f, clientId)));
  const waits = tasks.map((task) =>
    tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
      timeoutMs: 60_000,
      states: SETTLED,
    }),
  );
  const claims = await Promise.all(tasks.map((task) => claimTask(f, task)));
  // every task moves at once: WORKING steps (no read), then its end
  await Promise.all(
    tasks.map(async (task, i) => {
      const claim = claims[i];
      if (!claim) throw new Error("no claim");
      await move(f, claim, task, "TASK_STATE_WORKING");
      await move(f, claim, task, "TASK_STATE_WORKING");
      await move(f, claim, task, i % 2 === 0 ? "TASK_STATE_COMPLETED" : "TASK_STATE_INPUT_REQUIRED");
    }),
  );
  const outcomes = await Promise.all(waits);
  expect(outcomes.map((outcome) => outcome.kind)).toEqual(tasks.map(() => "met"));
  expect(tail.missedNotices).toBe(0);
  // the first read of each wait, and at most one more per task for its end (none when the first read saw it)
  expect(journal.reads).toBeLessThanOrEqual(2 * count);
  expect(tail.followedTasks).toBe(0);
  await tail.stop();
});

/** Accepts a task as SendMessage does: the tail's mark taken before the write, the task from the script's reply. */
async function acceptKnown(tail: JournalTail, clientId: string): Promise<{ task: AcceptedTask; known: KnownTask }> {
  const mark = tail.mark();
  const accepted = await f.journal.accept({ clientId, profile: PROFILE, profileQuota: 0, message: userMessage("hi") });
  if (!accepted.record) throw new Error("the accept script created no task");
  const task = { clientId, taskId: accepted.taskId, contextId: accepted.record.contextId };
  return { task, known: { record: accepted.record, mark } };
}

/** Completes `task` and resolves once the tail has handled its notice (a later notice on the same channel was read). */
async function completeAndSettle(tail: JournalTail, task: AcceptedTask): Promise<void> {
  const barrier = await acceptTask(f, task.clientId);
  const barrierWait = tail.waitUntil(task.clientId, barrier.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
  });
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  // notices leave on one connection and arrive in order: once the barrier's is read, the task's was handled
  await move(f, await claimTask(f, barrier), barrier, "TASK_STATE_COMPLETED");
  expect((await barrierWait).kind).toBe("met");
}

test("a wait that knows its task from its own accept reads it only for the state that ends it", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const { task, known } = await acceptKnown(tail, clientId);
  const waiting = tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    known,
  });
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_WORKING");
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  const outcome = await waiting;
  expect(outcome.kind).toBe("met");
  if (outcome.kind === "met") expect(outcome.snapshot.record.state).toBe("TASK_STATE_COMPLETED");
  expect(journal.reads).toBe(1);
  await tail.stop();
});

test("a task that ends between its accept and the start of its wait is not missed (no safety check runs)", async () => {
  const { tail, journal } = await startTail();
  const clientId = await liveClient(f);
  const { task, known } = await acceptKnown(tail, clientId);
  await completeAndSettle(tail, task);
  const readsBefore = journal.reads;
  const outcome = await tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    known,
  });
  expect(outcome.kind).toBe("met");
  expect(journal.reads).toBe(readsBefore + 1);
  await tail.stop();
});

test("a wait whose notices the tail may have dropped (more than it keeps) reads its task first", async () => {
  const { tail } = await startTail();
  const clientId = await liveClient(f);
  const { task, known } = await acceptKnown(tail, clientId);
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_COMPLETED");
  // more notices of other tasks than the tail keeps push this task's out
  const flood = f.redis.pipeline();
  for (let i = 0; i < 20_000; i++) flood.publish(f.keys.eventsChannel(), `flood-${i} TASK_STATE_WORKING 2`);
  await flood.exec();
  await completeAndSettle(tail, (await acceptKnown(tail, clientId)).task);
  const outcome = await tail.waitUntil(clientId, task.taskId, (record) => SETTLED.has(record.state), {
    timeoutMs: 10_000,
    states: SETTLED,
    known,
  });
  expect(outcome.kind).toBe("met");
  await tail.stop();
});
