// Interrupted tasks through a real gateway and actors: a client at its maxInterruptedTasks is refused
// (503 INTERRUPTED_TASKS_LIMIT_EXCEEDED) and nothing stored; a task that gets no message for its profile's
// inputTimeoutSeconds ends FAILED with a status message saying so, its webhook goes out like any transition's, and the
// client's interrupted count drops, so it is served again.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { readStatus } from "../../../src/journal/index.ts";
import { tenancyViolations, terminalEvents } from "../../faults/invariants.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { waitFor } from "../actors/harness.ts";
import { errorInfo, message, rpc } from "../gateway/harness.ts";
import type { Running } from "../multi/installation.ts";
import { type Receiver, startReceiver } from "../push/receiver.ts";
import { redisNowMs, type TenancyInstallation, tenancyInstallation } from "./setup.ts";

let server: TestRedis;
let redis: Redis;
let setup: TenancyInstallation;
let gateway: Running & { url: string };
let hook: Receiver;

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  hook = await startReceiver();
  setup = await tenancyInstallation(server.url, { inputTimeoutSeconds: 5 }, {}, [`127.0.0.1:${hook.port}`]);
  [gateway] = await Promise.all([setup.inst.gateway(), setup.inst.work("bun", 1)]);
}, 60_000);

afterAll(async () => {
  await setup?.close();
  await hook?.close();
  await server?.stop();
}, 30_000);

test("an interrupted task fails after its input timeout: journal, webhook, counts; the limit refuses until then", async () => {
  const { keys } = setup.inst;
  const client = await setup.inst.client();
  const shard = keys.shardOf(client.id);
  expect((await setup.inst.cli(["clients", "limit", client.id, "--max-interrupted-tasks", "1"])).code).toBe(0);
  const url = `http://127.0.0.1:${hook.port}/hook`;
  const asked = await rpc(
    gateway.url,
    "SendMessage",
    { message: message("[input] ask me"), configuration: { taskPushNotificationConfig: { url } } },
    { key: client.key },
  );
  const task = asked.body.result.task;
  expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  expect(await redis.smembers(keys.clientInterrupted(shard, client.id))).toEqual([task.id]);
  // what `a2a-runtime status` shows (read in process: the command's own output is tested with the heartbeats)
  expect((await readStatus(redis, keys, setup.inst.config)).interruptedTasks).toBe(1);

  // at its limit of 1 interrupted task, a new task is refused and nothing is stored
  const refusedMessage = message("one more");
  const refused = await rpc(gateway.url, "SendMessage", { message: refusedMessage }, { key: client.key });
  expect(refused.status).toBe(503);
  expect(errorInfo(refused).reason).toBe("INTERRUPTED_TASKS_LIMIT_EXCEEDED");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await redis.exists(keys.dedup(shard, client.id, "echo", refusedMessage.messageId))).toBe(0);
  expect(await redis.zcard(keys.clientTasks(shard, client.id, "echo"))).toBe(1);

  // The signal the retention pass reads: Redis's clock passing the task's input-due time. After it, the task fails.
  const due = Number(await redis.zscore(keys.inputDue(shard), task.id));
  expect(due).toBeGreaterThan(0);
  await waitFor(async () => (await redisNowMs(redis)) >= due, 10_000, "the input timeout to pass");
  const failed = await waitFor(
    async () => {
      const answer = await rpc(gateway.url, "GetTask", { id: task.id }, { key: client.key });
      return answer.body.result?.status.state === "TASK_STATE_FAILED" && answer.body.result;
    },
    15_000,
    "the task to fail",
  );
  expect(failed.status.message.parts[0].text).toContain("input timeout of 5 s");
  expect(await terminalEvents(redis, keys.journal(shard, task.id))).toBe(1);
  expect(await redis.scard(keys.clientInterrupted(shard, client.id))).toBe(0);
  expect(await redis.zscore(keys.inputDue(shard), task.id)).toBeNull();
  expect(await redis.zscore(keys.purge(shard), task.id)).not.toBeNull();

  // its webhook goes out like any transition's: the receiver gets the FAILED event
  const states = () =>
    hook.requests.flatMap((r) => (JSON.parse(r.body).statusUpdate?.status.state as string | undefined) ?? []);
  await waitFor(async () => states().includes("TASK_STATE_FAILED"), 15_000, "a FAILED webhook");
  expect(states().filter((s) => s === "TASK_STATE_FAILED")).toHaveLength(1);

  // the count dropped: the client is served again
  const next = await rpc(gateway.url, "SendMessage", { message: message("served again") }, { key: client.key });
  expect(next.body.result?.task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(await tenancyViolations(redis, keys.prefix)).toEqual([]);
}, 60_000);
