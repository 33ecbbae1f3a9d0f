// A client sees only its own tasks: every method on another client's task (or on a task of another profile) answers
// exactly what it answers for a task that does not exist, and writes nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { type Harness, message, profile, type RpcAnswer, rpc, startHarness } from "./harness.ts";

let h: Harness;
let owner: { id: string; key: string };
let other: { id: string; key: string };
let taskId: string;
const MISSING = "01NOSUCHTASK0000000000000";

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("other")] });
  await h.actor.live();
  owner = await h.client({ name: "owner" });
  other = await h.client({ name: "other" });
  const pending = rpc(h.gateway.url, "SendMessage", { message: message("mine") }, { key: owner.key });
  const claim = await h.actor.takeOne({ clientId: owner.id });
  await h.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "Which one?" });
  taskId = (await pending).body.result.task.id;
});

afterAll(async () => {
  await h.stop();
});

/** Every method that names a task, as [method, params]. */
function callsOn(id: string): [string, unknown][] {
  return [
    ["GetTask", { id }],
    ["GetTask", { id, historyLength: 1 }],
    ["CancelTask", { id }],
    ["SendMessage", { message: { ...message("follow-up", { taskId: id }), messageId: "same" } }],
    [
      "SendMessage",
      {
        message: { ...message("follow-up", { taskId: id }), messageId: "same-immediate" },
        configuration: { returnImmediately: true },
      },
    ],
    ["SubscribeToTask", { id }],
    ["SendStreamingMessage", { message: { ...message("stream", { taskId: id }), messageId: "same-stream" } }],
    ["CreateTaskPushNotificationConfig", { taskId: id, url: "https://example.com/hook" }],
    ["GetTaskPushNotificationConfig", { taskId: id, id: "cfg" }],
    ["ListTaskPushNotificationConfigs", { taskId: id }],
    ["DeleteTaskPushNotificationConfig", { taskId: id, id: "cfg" }],
  ];
}

/** What the client sees, with the task id blanked out. */
function seen(answer: RpcAnswer, id: string): string {
  return JSON.stringify({ status: answer.status, body: answer.body }).replaceAll(id, "<task>");
}

test("another client's task answers exactly like a missing task, in every method", async () => {
  const before = await keysUnder(h.redis, h.prefix);
  const foreign = callsOn(taskId);
  const missing = callsOn(MISSING);
  for (const [index, [method, params]] of foreign.entries()) {
    const theirs = await rpc(h.gateway.url, method, params, { key: other.key });
    const none = await rpc(h.gateway.url, method, missing[index]?.[1], { key: other.key });
    expect(theirs.status).toBe(200);
    expect(theirs.body.error).toBeDefined();
    expect(seen(theirs, taskId)).toBe(seen(none, MISSING));
    if (method === "GetTask" || method === "CancelTask" || method === "SendMessage") {
      expect(theirs.body.error.code).toBe(-32001);
      expect(theirs.body.error.message).toBe("Task not found");
      expect(theirs.body.error.data[0].metadata).toEqual({ taskId });
    }
  }
  const listed = await rpc(h.gateway.url, "ListTasks", {}, { key: other.key });
  expect(listed.body.result).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
});

test("the owner's own task in another profile's endpoint is not found either", async () => {
  const before = await keysUnder(h.redis, h.prefix);
  const missing = callsOn(MISSING);
  for (const [index, [method, params]] of callsOn(taskId).entries()) {
    const options = { key: owner.key, profile: "other" };
    const elsewhere = await rpc(h.gateway.url, method, params, options);
    const none = await rpc(h.gateway.url, method, missing[index]?.[1], options);
    expect(seen(elsewhere, taskId)).toBe(seen(none, MISSING));
  }
  const listed = await rpc(h.gateway.url, "ListTasks", {}, { key: owner.key, profile: "other" });
  expect(listed.body.result.totalSize).toBe(0);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);

  const own = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: owner.key });
  expect(own.body.result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
});

test("a messageId resent to another profile is a task of that profile, never the first profile's task", async () => {
  const sent = message("the same message, to two agents");
  const params = { message: sent, configuration: { returnImmediately: true } };
  const first = await rpc(h.gateway.url, "SendMessage", params, { key: owner.key });
  const elsewhere = await rpc(h.gateway.url, "SendMessage", params, { key: owner.key, profile: "other" });
  const firstId = first.body.result.task.id;
  const otherId = elsewhere.body.result.task.id;
  expect(otherId).not.toBe(firstId);
  // each profile's retry answers its own task, and each profile's GetTask knows only its own
  const retry = await rpc(h.gateway.url, "SendMessage", params, { key: owner.key, profile: "other" });
  expect(retry.body.result.task.id).toBe(otherId);
  const crossed = await rpc(h.gateway.url, "GetTask", { id: firstId }, { key: owner.key, profile: "other" });
  expect(crossed.body.error?.code).toBe(-32001);
});
