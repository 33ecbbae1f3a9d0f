// An actor whose runs' ends claim its next runs (one node): a backlog drains with every run claimed once, and a
// backlog in one shard does not hold up another shard's runs, since each end reads the shards from a rotating first.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClientRegistry, KeySpace, RunLedger, TaskJournal } from "../../../src/journal/index.ts";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { cleanup, type Installation, installation, killStarted, startCli, waitFor } from "./harness.ts";

let server: TestRedis;
let inst: Installation;
beforeAll(async () => {
  server = await startRedis();
  inst = await installation(server, { env: { A2A_REDIS_SHARDS: "2", A2A_WORKER_CONCURRENCY: "1" } });
});
afterAll(async () => {
  killStarted();
  cleanup(inst);
  await server.stop();
});

test("a shard's backlog does not hold up another shard's runs, and every run of it is claimed once", async () => {
  const keys = new KeySpace(inst.f.prefix, 2);
  const journal = new TaskJournal(inst.f.redis, keys, { livenessSeconds: 5, dedupSeconds: 60, retryAfterSeconds: 1 });
  const registry = new ClientRegistry(inst.f.redis, keys);
  const ledger = new RunLedger(inst.f.redis, keys);
  const byShard = new Map<number, string>();
  while (byShard.size < 2) {
    const { record } = await registry.add({ name: `c${byShard.size}` });
    if (!byShard.has(keys.shardOf(record.id))) byShard.set(keys.shardOf(record.id), record.id);
  }
  // the queues are filled before the actor starts: a live beat lets the accepts in, as a running worker's would
  for (const shard of [0, 1]) {
    await ledger.ensureGroup(shard);
    await ledger.beat(shard, 300);
  }
  const accept = async (clientId: string, text: string) => ({
    clientId,
    taskId: (await journal.accept({ clientId, profile: "echo", profileQuota: 0, message: userMessage(text) })).taskId,
  });
  const backlog = [];
  for (let i = 0; i < 30; i++) backlog.push(await accept(byShard.get(0) ?? "", `backlog ${i}`));
  const others = [await accept(byShard.get(1) ?? "", "other 0"), await accept(byShard.get(1) ?? "", "other 1")];

  const work = startCli(inst, ["work", "--actors", "1"]);
  const all = [...backlog, ...others];
  await waitFor(
    async () => {
      const states = await Promise.all(
        all.map((t) => inst.f.redis.hget(keys.task(keys.shardOf(t.clientId), t.taskId), "state")),
      );
      return states.every((state) => state === "TASK_STATE_COMPLETED");
    },
    20_000,
    "every task to complete",
  );
  const finishedAt = async (t: { clientId: string; taskId: string }) =>
    Number(await inst.f.redis.hget(keys.task(keys.shardOf(t.clientId), t.taskId), "ts"));
  const backlogTimes = (await Promise.all(backlog.map(finishedAt))).sort((a, b) => a - b);
  const otherTimes = await Promise.all(others.map(finishedAt));
  // with one run at a time, the other shard's two runs end among the first few, not after the backlog
  expect(Math.max(...otherTimes)).toBeLessThanOrEqual(backlogTimes[9] ?? 0);
  for (const t of all) {
    expect(await inst.f.redis.hget(keys.run(keys.shardOf(t.clientId), t.taskId), "tries")).toBe("1");
  }
  work.child.kill("SIGTERM");
  expect((await work.exited).code).toBe(0);
}, 40_000);
