// What a streaming call answers before its stream starts is an ordinary JSON-RPC response, never an SSE stream: a
// terminal task, a missing or foreign task, a profile without streaming, bad input. A failure after the start is an
// error event, and the stream closes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { AgentCard } from "../../../src/protocol/index.ts";
import { keysUnder } from "../../support/redis.ts";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, profile, rpc, startHarness } from "../gateway/harness.ts";
import { streamKeys } from "./helpers.ts";

let h: Harness;
let owner: { id: string; key: string };
let other: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("quiet", { streaming: false })] });
  await h.actor.live();
  owner = await h.client({ name: "owner" });
  other = await h.client({ name: "other" });
});

afterAll(async () => {
  await h.stop();
});

async function created(text: string, key = owner.key, profileName = "echo"): Promise<string> {
  const answer = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message(text), configuration: { returnImmediately: true } },
    { key, profile: profileName },
  );
  return answer.body.result.task.id;
}

function expectPlainError(stream: Awaited<ReturnType<typeof openStream>>, code: number): void {
  expect(stream.contentType).toBe("application/json");
  expect(stream.events).toEqual([]);
  expect(stream.json.error.code).toBe(code);
}

test("SubscribeToTask on a terminal task is -32004 as plain JSON; nothing is leased", async () => {
  const taskId = await created("finish first");
  await h.actor.complete(await h.actor.takeOne({ taskId }));
  const before = await keysUnder(h.redis, h.prefix);
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: owner.key, id: 9 });
  expect(stream.status).toBe(200);
  expectPlainError(stream, -32004);
  expect(stream.json.id).toBe(9);
  expect(stream.json.error.data[0]).toMatchObject({ reason: "UNSUPPORTED_OPERATION", metadata: { taskId } });
  const followUp = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("more?", { taskId }) },
    { key: owner.key },
  );
  expectPlainError(followUp, -32004);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
});

test("a missing task and another client's task are the same -32001, as plain JSON, for both methods", async () => {
  const taskId = await created("mine");
  const answers: string[] = [];
  for (const id of [taskId, "01NOSUCHTASK0000000000000"]) {
    const subscribe = await openStream(h.gateway.url, "SubscribeToTask", { id }, { key: other.key });
    expectPlainError(subscribe, -32001);
    const follow = await openStream(
      h.gateway.url,
      "SendStreamingMessage",
      { message: { ...message("hi", { taskId: id }), messageId: "fixed" } },
      { key: other.key },
    );
    expectPlainError(follow, -32001);
    answers.push(JSON.stringify([subscribe.json, follow.json]).replaceAll(id, "<id>"));
  }
  expect(answers[0]).toBe(answers[1]!);
  expect(await streamKeys(h)).toEqual([]);
});

test("a profile with streaming off says so in its card and answers -32004 to both methods; nothing is stored", async () => {
  const card = async (name: string) =>
    (await (await fetch(`${h.gateway.url}/a2a/${name}/.well-known/agent-card.json`)).json()) as AgentCard;
  expect((await card("quiet")).capabilities.streaming).toBe(false);
  expect((await card("echo")).capabilities.streaming).toBe(true);
  const taskId = await created("quiet one", owner.key, "quiet");
  const before = await keysUnder(h.redis, h.prefix);
  const send = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("x") },
    {
      key: owner.key,
      profile: "quiet",
    },
  );
  expectPlainError(send, -32004);
  const subscribe = await openStream(
    h.gateway.url,
    "SubscribeToTask",
    { id: taskId },
    {
      key: owner.key,
      profile: "quiet",
    },
  );
  expectPlainError(subscribe, -32004);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
});

test("bad params, no credentials and a missing A2A-Version are plain JSON answers too", async () => {
  const badParams = await openStream(h.gateway.url, "SubscribeToTask", { id: 5 }, { key: owner.key });
  expectPlainError(badParams, -32602);
  const noMessage = await openStream(h.gateway.url, "SendStreamingMessage", {}, { key: owner.key });
  expectPlainError(noMessage, -32602);
  const anonymous = await openStream(h.gateway.url, "SubscribeToTask", { id: "x" }, { key: "wrong" });
  expect(anonymous.status).toBe(401);
  expectPlainError(anonymous, -32000);
  const oldVersion = await openStream(
    h.gateway.url,
    "SubscribeToTask",
    { id: "x" },
    {
      key: owner.key,
      headers: { "A2A-Version": "0.3" },
    },
  );
  expectPlainError(oldVersion, -32009);
});

test("a task that disappears mid-stream: an error event with the JSON-RPC error, then the stream closes", async () => {
  const taskId = await created("vanishing");
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: owner.key, id: "s" });
  await stream.waitForEvents(1);
  await h.redis.del(h.keys.task(0, taskId));
  await h.redis.publish(h.keys.eventsChannel(), taskId);
  await stream.closed;
  expect(stream.events).toHaveLength(2);
  expect(stream.events[1]!.event).toBe("error");
  expect(JSON.parse(stream.events[1]!.data)).toMatchObject({
    jsonrpc: "2.0",
    id: "s",
    error: { code: -32001, message: "Task not found" },
  });
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
});
