// A change notice names the task's new state, so a blocking wait reads the task only when the state can end it:
// WORKING progress costs no read; COMPLETED does.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { JournalTail } from "../../../src/gateway/index.ts";
import { type Snapshot, TaskJournal } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { INTERRUPTED_STATES, type TaskState, TERMINAL_STATES } from "../../../src/protocol/index.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { acceptTask, claimTask, liveClient, move } from "../journal/helpers.ts";

class CountingJournal extends TaskJournal {
  reads = 0;
  override async snapshot(clientId: string, taskId: string, profile?: string): Promise<Snapshot | undefined> {
    this.reads += 1;
    return await super.snapshot(clientId, taskId, profile);
  }
}

let server: TestRedis;
let f: JournalFixture;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
});
afterAll(async () => {
  await server.stop();
});

test("a blocking wait reads the task for a settling state only, not for each WORKING step", async () => {
  const journal = new CountingJournal(f.redis, f.keys, {
    livenessSeconds: 120,
    dedupSeconds: 60,
    retryAfterSeconds: 5,
  });
  const tail = new JournalTail({
    subscriber: server.client(),
    redis: f.redis,
    journal,
    keys: f.keys,
    logger: createLogger("test", "silent"),
    safetyIntervalMs: 60_000,
  });
  await tail.start();
  const clientId = await liveClient(f);
  const task = await acceptTask(f, clientId);
  const settledStates: ReadonlySet<TaskState> = new Set<TaskState>([...TERMINAL_STATES, ...INTERRUPTED_STATES]);
  const waiting = tail.waitUntil(clientId, task.taskId, (record) => settledStates.has(record.state), {
    timeoutMs: 10_000,
    states: settledStates,
  });
  await Bun.sleep(50);
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
