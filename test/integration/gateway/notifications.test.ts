// A JSON-RPC request without an `id` is a notification: the gateway carries it out and answers with no body (204), in
// either dialect. A SendMessage notification does not wait for its task; a failed one is still silent (204), unless
// its error has an HTTP status of its own (a refusal's 503), which is kept, still without a body.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { streamKeys } from "../streams/helpers.ts";
import { eventually, type Harness, message, post, profile, startHarness } from "./harness.ts";

let h: Harness;
let key: string;
let clientId: string;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo")] });
  await h.actor.live();
  ({ id: clientId, key } = await h.client());
});

afterAll(async () => {
  await h.stop();
});

function notify(method: string, params: unknown, options: { key?: string; version?: string | null } = {}) {
  return post(h.gateway.url, JSON.stringify({ jsonrpc: "2.0", method, params }), { key, ...options });
}

async function taskIdsOfClient(): Promise<string[]> {
  const listed = await post(h.gateway.url, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }), {
    key,
  });
  return listed.body.result.tasks.map((task: { id: string }) => task.id);
}

test("a SendMessage notification stores the task, answers 204 with no body at once and does not wait for it", async () => {
  const before = await taskIdsOfClient();
  const answer = await notify("SendMessage", { message: message("fire and forget") });
  expect(answer.status).toBe(204);
  expect(answer.body).toBeUndefined();
  const claim = await h.actor.takeOne({ clientId }, 10_000);
  expect(before).not.toContain(claim.taskId);
  expect(await taskIdsOfClient()).toContain(claim.taskId);
  await h.actor.complete(claim);
});

test("a 0.3 notification (no header, no id) is carried out too; a streaming one stores its task and opens no stream", async () => {
  const answer = await notify(
    "message/send",
    {
      message: { kind: "message", messageId: `n-${Date.now()}`, role: "user", parts: [{ kind: "text", text: "0.3" }] },
    },
    { version: null },
  );
  expect(answer.status).toBe(204);
  await h.actor.complete(await h.actor.takeOne({ clientId }, 10_000));

  const before = await taskIdsOfClient();
  const streamed = await notify("SendStreamingMessage", { message: message("no stream wanted") });
  expect(streamed.status).toBe(204);
  expect(streamed.headers.get("content-type") ?? "").not.toContain("text/event-stream");
  const [taskId] = (await taskIdsOfClient()).filter((id) => !before.includes(id));
  expect(taskId).toBeDefined();
  await eventually(async () => (await streamKeys(h)).length === 0); // the stream's leases were given back
  // The task is still queued (nothing claimed it): a CancelTask notification cancels it at once.
  const cancel = await notify("CancelTask", { id: taskId });
  expect(cancel.status).toBe(204);
  const got = await post(
    h.gateway.url,
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: taskId } }),
    { key },
  );
  expect(got.body.result.status.state).toBe("TASK_STATE_CANCELED");
});

test("a failed notification is silent and stores nothing; a refusal keeps its 503 and Retry-After, without a body", async () => {
  const before = await keysUnder(h.redis, h.prefix);
  const bad = await notify("SendMessage", { message: { role: "ROLE_USER" } });
  expect(bad.status).toBe(204);
  expect(bad.body).toBeUndefined();
  const missing = await notify("GetTask", { id: "no-such-task" });
  expect(missing.status).toBe(204);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);

  const limited = await h.client({ limit: 1 });
  expect((await notify("SendMessage", { message: message("one") }, { key: limited.key })).status).toBe(204);
  const refused = await notify("SendMessage", { message: message("two") }, { key: limited.key });
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
  expect(refused.body).toBeUndefined();
  await h.actor.complete(await h.actor.takeOne({ clientId: limited.id }, 10_000));
});

test("an id of null is a request, not a notification: it gets its answer", async () => {
  const answer = await post(
    h.gateway.url,
    JSON.stringify({ jsonrpc: "2.0", id: null, method: "GetTask", params: { id: "x" } }),
    {
      key,
    },
  );
  expect(answer.status).toBe(200);
  expect(answer.body).toMatchObject({ id: null, error: { code: -32001 } });
});
