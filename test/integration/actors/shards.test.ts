// With several hash-tag shards, one actor consumes every shard's queue and `status` sums them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClientRegistry, KeySpace, TaskJournal } from "../../../src/journal/index.ts";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  cleanup,
  type Installation,
  installation,
  killStarted,
  liveWorkers,
  runCli,
  startCli,
  waitFor,
} from "./harness.ts";

let server: TestRedis;
let inst: Installation;
beforeAll(async () => {
  server = await startRedis();
  inst = await installation(server, { env: { A2A_REDIS_SHARDS: "4" } });
});
afterAll(async () => {
  killStarted();
  cleanup(inst);
  await server.stop();
});

test("one actor runs the tasks of clients spread over four shards", async () => {
  const keys = new KeySpace(inst.f.prefix, 4);
  const journal = new TaskJournal(inst.f.redis, keys, { livenessSeconds: 5, dedupSeconds: 60, retryAfterSeconds: 1 });
  const registry = new ClientRegistry(inst.f.redis, keys);
  const clients = await Promise.all(Array.from({ length: 12 }, (_, i) => registry.add({ name: `c${i}` })));
  const shards = new Set(clients.map((c) => keys.shardOf(c.record.id)));
  expect(shards.size).toBeGreaterThan(1);

  const work = startCli(inst, ["work", "--actors", "1"]);
  await liveWorkers(inst, 1);
  const tasks = await Promise.all(
    clients.map(async ({ record }) => ({
      clientId: record.id,
      taskId: (
        await journal.accept({
          clientId: record.id,
          profile: "echo",
          profileQuota: 0,
          message: userMessage(record.name),
        })
      ).taskId,
    })),
  );
  await waitFor(
    async () => {
      const snapshots = await Promise.all(tasks.map((t) => journal.snapshot(t.clientId, t.taskId)));
      return snapshots.every((s) => s?.record.state === "TASK_STATE_COMPLETED");
    },
    10_000,
    "every task to complete",
  );
  const status = JSON.parse((await runCli(inst, ["status", "--json"])).stdout);
  expect(status).toMatchObject({ liveConsumers: 1, queueDepth: 0, running: 0 });
  const beat = inst.f.keys.worker(status.workers[0].id);
  await waitFor(async () => (await inst.f.redis.hget(beat, "done")) === "12", 3000, "12 runs done in the heartbeat");
  work.child.kill("SIGTERM");
  expect((await work.exited).code).toBe(0);
}, 30_000);
