// A finished task's journal kept for 0 s (the default): the terminal step deletes it when no stream follows the task,
// keeps it 60 s for a stream that does, and a stream whose lease the terminal step did not see (it was being opened)
// ends with what the task's snapshot says, as the events it would have read: each artifact whole, then the status.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openStream } from "../../support/sse-client.ts";
import { type Harness, message, rpc, startHarness } from "../gateway/harness.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

async function submitted(text: string): Promise<string> {
  const accepted = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message(text), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  return accepted.body.result.task.id as string;
}

test("no stream follows the task: COMPLETED deletes its journal in the same step; GetTask answers from the task", async () => {
  const taskId = await submitted("no watcher");
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_COMPLETED", {
    artifacts: [{ artifactId: "result", parts: [{ text: "done" }] }],
    journalRetentionSeconds: 0,
  });
  expect(await h.redis.exists(h.keys.journal(0, taskId))).toBe(0);
  expect(await h.redis.hget(h.keys.task(0, taskId), "jbytes")).toBeNull();
  const purgeAt = Number(await h.redis.zscore(h.keys.purge(0), taskId));
  expect(purgeAt).toBe(Number(await h.redis.hget(h.keys.task(0, taskId), "purge")));
  const got = (await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: client.key })).body;
  expect(got.result).toMatchObject({ id: taskId, status: { state: "TASK_STATE_COMPLETED" } });
  expect(got.result.artifacts).toEqual([{ artifactId: "result", parts: [{ text: "done" }] }]);
});

test("a stream follows the task: its journal is kept 60 s and the stream reads the terminal event from it", async () => {
  const taskId = await submitted("one watcher");
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key });
  await stream.waitForEvents(1);
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_COMPLETED", { journalRetentionSeconds: 0 });
  await stream.closed;
  expect(stream.results.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
  expect(await h.redis.exists(h.keys.journal(0, taskId))).toBe(1);
  const [seconds, micros] = await h.redis.time();
  const left = Number(await h.redis.zscore(h.keys.purge(0), taskId)) - (Number(seconds) * 1000 + Number(micros) / 1000);
  expect(left).toBeGreaterThan(50_000);
  expect(left).toBeLessThanOrEqual(60_000);
});

test("a stream the terminal step did not see ends with the finished task's artifacts and status", async () => {
  const taskId = await submitted("late watcher");
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key });
  await stream.waitForEvents(1);
  // as if the stream's lease were taken just after the terminal step (SubscribeToTask reads the snapshot first)
  await h.redis.del(h.keys.taskStreams(0, taskId));
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_COMPLETED", {
    artifacts: [{ artifactId: "result", parts: [{ text: "the answer" }] }],
    journalRetentionSeconds: 0,
  });
  await stream.closed;
  expect(await h.redis.exists(h.keys.journal(0, taskId))).toBe(0);
  const [artifact, last] = stream.results.slice(-2);
  expect(artifact?.artifactUpdate).toMatchObject({
    taskId,
    artifact: { artifactId: "result", parts: [{ text: "the answer" }] },
    lastChunk: true,
  });
  expect(last?.statusUpdate).toMatchObject({ taskId, status: { state: "TASK_STATE_COMPLETED" } });
});
