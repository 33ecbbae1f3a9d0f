import { afterAll, beforeAll, expect, test } from "bun:test";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";

let server: TestRedis;
let f: JournalFixture;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
});
afterAll(async () => {
  await server.stop();
});

test("accept, claim, work and complete a task", async () => {
  const { record } = await f.clients.add({ name: "c1" });
  await f.ledger.ensureGroup(0);
  await f.ledger.beat(0, 300);
  const accepted = await f.journal.accept({
    clientId: record.id,
    profile: "echo",
    profileQuota: 0,
    message: userMessage("hi"),
  });
  expect(accepted.created).toBe(true);
  const reply = (await f.redis.xreadgroup("GROUP", "actors", "a1", "COUNT", 10, "STREAMS", f.keys.queue(0), ">")) as [
    string,
    [string, string[]][],
  ][];
  const [entryId] = reply[0]![1][0]!;
  const claim = await f.ledger.claim(0, accepted.taskId, entryId, "a1", 30_000, 3);
  if (typeof claim === "string") throw new Error(claim);
  expect(claim.fence).toBe(1);
  const snap = await f.journal.snapshot(record.id, accepted.taskId);
  expect(snap?.record.state).toBe("TASK_STATE_SUBMITTED");
  const result = await f.ledger.transition({
    claim,
    kind: "status",
    state: "TASK_STATE_COMPLETED",
    status: { state: "TASK_STATE_COMPLETED" },
    event: {
      statusUpdate: {
        taskId: accepted.taskId,
        contextId: snap!.record.contextId,
        status: { state: "TASK_STATE_COMPLETED" },
      },
    },
    retentionSeconds: 100,
    journalRetentionSeconds: 10,
  });
  expect(result).toEqual({ ok: true, rev: 2 });
  const after = await f.journal.readJournal(record.id, accepted.taskId, snap!.cursor);
  expect(after.map((e) => e.rev)).toEqual([2]);
});
