// redis.ackReplicas: an accepted task is on the replica before the client hears of it; without a replica to confirm,
// the client gets 503 STORE_NOT_REPLICATED with the task id, and a retry with the same messageId returns that task.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { errorInfo, eventually, type Harness, message, retryInfo, rpc, startHarness } from "./harness.ts";

let primary: TestRedis;
let replica: TestRedis | undefined;
let h: Harness;

/** Replicas the primary counts as online (INFO replication), the signal WAIT depends on. */
async function onlineReplicas(redis: Redis): Promise<number> {
  const info = await redis.info("replication");
  return [...info.matchAll(/^slave\d+:.*state=online/gm)].length;
}

async function startReplica(): Promise<TestRedis> {
  const server = await startRedis({ replicaOf: primary.port });
  await eventually(async () => (await onlineReplicas(h.redis)) === 1, 10_000);
  return server;
}

beforeAll(async () => {
  primary = await startRedis({ own: true });
  h = await startHarness({
    server: primary,
    // long enough for a busy machine's replica to confirm; the refusal below waits this long
    env: { A2A_REDIS_ACK_REPLICAS: "1", A2A_REDIS_ACK_TIMEOUT_MS: "3000" },
  });
  replica = await startReplica();
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
  await replica?.stop();
  await primary.stop();
});

test("an accepted task is already on the replica when the client gets its id", async () => {
  const client = await h.client();
  const answer = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("copied"), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  expect(answer.status).toBe(200);
  const taskId: string = answer.body.result.task.id;
  const copy = replica?.client();
  expect(await copy?.exists(h.keys.task(0, taskId))).toBe(1);
});

test("no replica confirms: 503 STORE_NOT_REPLICATED naming the task; the same messageId later returns that task", async () => {
  const client = await h.client();
  await replica?.stop();
  replica = undefined;
  await eventually(async () => (await onlineReplicas(h.redis)) === 0, 10_000);

  const params = { message: message("unconfirmed"), configuration: { returnImmediately: true } };
  const refused = await rpc(h.gateway.url, "SendMessage", params, { key: client.key });
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(refused.body.error.code).toBe(-32000);
  const info = errorInfo(refused);
  expect(info).toMatchObject({ reason: "STORE_NOT_REPLICATED", domain: "a2a-runtime" });
  expect(info.metadata).toMatchObject({ required: "1", confirmed: "0" });
  expect(retryInfo(refused)?.retryDelay).toBe(`${refused.headers.get("retry-after")}s`);
  const taskId = info.metadata?.taskId ?? "";
  expect(taskId).not.toBe("");

  // The write stands on the primary: the client can read it, and cancelling it is refused the same way.
  const read = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: client.key });
  expect(read.body.result.id).toBe(taskId);
  const cancel = await rpc(h.gateway.url, "CancelTask", { id: taskId }, { key: client.key });
  expect(errorInfo(cancel)).toMatchObject({ reason: "STORE_NOT_REPLICATED", metadata: { taskId } });

  replica = await startReplica();
  const retried = await rpc(h.gateway.url, "SendMessage", params, { key: client.key });
  expect(retried.status).toBe(200);
  expect(retried.body.result.task.id).toBe(taskId);
  expect(await replica.client().exists(h.keys.task(0, taskId))).toBe(1);
});
