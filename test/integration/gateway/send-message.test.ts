// Agent cards, health and SendMessage end to end over real HTTP against a real Redis, with the JSON shapes of the
// A2A 1.0 digest: the {"task": …} wrapper, enum spellings (TASK_STATE_*, ROLE_*), no `kind` fields.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { type AgentCard, AgentCardSchema, SendMessageResponseSchema } from "../../../src/protocol/index.ts";
import { keysUnder } from "../../support/redis.ts";
import { errorInfo, type Harness, message, profile, rpc, startHarness } from "./harness.ts";

const sendResponse = TypeCompiler.Compile(SendMessageResponseSchema);
const cardShape = TypeCompiler.Compile(AgentCardSchema);

const FORMS = profile("forms", {
  description: "Takes a booking form.",
  inputModes: ["text/plain", "application/json"],
  skill: { id: "book", name: "Book", description: "Books a trip.", tags: [], examples: ["Book Paris"] },
  inputSchema: {
    type: "object",
    properties: { city: { type: "string", minLength: 2 }, nights: { type: "integer", minimum: 1 } },
    required: ["city"],
  },
});

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), FORMS] });
  await h.actor.live();
  key = (await h.client({ name: "alice" })).key;
});

afterAll(async () => {
  await h.stop();
});

describe("agent cards and health", () => {
  test("the well-known card describes the first profile: its JSON-RPC endpoint /a2a/echo at 1.0, then at 0.3", async () => {
    const response = await fetch(`${h.gateway.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const etag = response.headers.get("etag");
    expect(etag).toBeTruthy();
    const card = (await response.json()) as AgentCard;
    expect(cardShape.Check(card)).toBe(true);
    expect(card.supportedInterfaces).toEqual([
      { url: `${h.gateway.url}/a2a/echo`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${h.gateway.url}/a2a/echo`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: `${h.gateway.url}/a2a/echo`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ]);
    expect(card).toMatchObject({
      url: `${h.gateway.url}/a2a/echo`,
      preferredTransport: "JSONRPC",
      protocolVersion: "0.3.0",
    });
    expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: false });
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } },
      apiKey: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
    });
    expect(card.securityRequirements).toEqual([
      { schemes: { bearer: { list: [] } } },
      { schemes: { apiKey: { list: [] } } },
    ]);
    expect(card.skills.map((skill) => skill.id)).toEqual(["echo"]);
    const again = await fetch(`${h.gateway.url}/.well-known/agent-card.json`, { headers: { "If-None-Match": etag! } });
    expect(again.status).toBe(304);
  });

  test("each profile has its own card at /a2a/<profile>/.well-known/agent-card.json", async () => {
    const card = (await (await fetch(`${h.gateway.url}/a2a/forms/.well-known/agent-card.json`)).json()) as AgentCard;
    expect(cardShape.Check(card)).toBe(true);
    expect(card.name).toBe("forms");
    expect(card.supportedInterfaces[0]?.url).toBe(`${h.gateway.url}/a2a/forms`);
    expect(card.skills[0]).toMatchObject({ id: "book", tags: ["forms"], examples: ["Book Paris"] });
    expect(card.defaultInputModes).toEqual(["text/plain", "application/json"]);
    expect((await fetch(`${h.gateway.url}/a2a/nope/.well-known/agent-card.json`)).status).toBe(404);
  });

  test("healthz answers 200 and readyz 200 while a worker beat is fresh", async () => {
    expect((await fetch(`${h.gateway.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${h.gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, redis: "ok", shards: [{ shard: 0, live: true }] });
  });
});

describe("SendMessage", () => {
  test("returnImmediately answers {task} at once: SUBMITTED, a generated contextId, the message in history", async () => {
    const answer = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("hello"), configuration: { returnImmediately: true } },
      { key, id: "req-1" },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.jsonrpc).toBe("2.0");
    expect(answer.body.id).toBe("req-1");
    expect(sendResponse.Check(answer.body.result)).toBe(true);
    const task = answer.body.result.task;
    expect(Object.keys(answer.body.result)).toEqual(["task"]);
    expect(task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect(task.status.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(task.contextId).toBeTruthy();
    expect(task.history).toHaveLength(1);
    expect(task.history[0]).toMatchObject({ role: "ROLE_USER", taskId: task.id, contextId: task.contextId });
    expect(JSON.stringify(answer.body)).not.toContain('"kind"');
  });

  test("blocking answers when the task completes, with its artifacts", async () => {
    const bob = await h.client({ name: "bob" });
    const pending = rpc(h.gateway.url, "SendMessage", { message: message("work") }, { key: bob.key });
    const claim = await h.actor.takeOne({ clientId: bob.id });
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await h.actor.complete(claim, "worked");
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(sendResponse.Check(answer.body.result)).toBe(true);
    expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answer.body.result.task.artifacts).toEqual([{ artifactId: "result", parts: [{ text: "worked" }] }]);
  });

  test("a client contextId is kept; historyLength 0 omits the history", async () => {
    const answer = await rpc(
      h.gateway.url,
      "SendMessage",
      {
        message: message("in context", { contextId: "ctx-mine" }),
        configuration: { returnImmediately: true, historyLength: 0 },
      },
      { key },
    );
    expect(answer.body.result.task.contextId).toBe("ctx-mine");
    expect("history" in answer.body.result.task).toBe(false);
  });

  test("a repeated messageId returns the same task; the same id with other content is -32602", async () => {
    const first = message("once");
    const params = { message: first, configuration: { returnImmediately: true } };
    const a = await rpc(h.gateway.url, "SendMessage", params, { key });
    const b = await rpc(h.gateway.url, "SendMessage", params, { key });
    expect(b.body.result.task.id).toBe(a.body.result.task.id);
    const before = await keysUnder(h.redis, h.prefix);
    const changed = { ...params, message: { ...first, parts: [{ text: "twice" }] } };
    const c = await rpc(h.gateway.url, "SendMessage", changed, { key });
    expect(c.body.error.code).toBe(-32602);
    expect(errorInfo(c).reason).toBe("MESSAGE_ID_REUSED");
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });

  test("a follow-up to a terminal task is -32004; a contextId that is not the task's is -32602", async () => {
    const carol = await h.client({ name: "carol" });
    const pending = rpc(h.gateway.url, "SendMessage", { message: message("finish me") }, { key: carol.key });
    await h.actor.complete(await h.actor.takeOne({ clientId: carol.id }));
    const task = (await pending).body.result.task;
    const before = await keysUnder(h.redis, h.prefix);
    const terminal = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("more", { taskId: task.id }) },
      { key: carol.key },
    );
    expect(terminal.body.error.code).toBe(-32004);
    expect(errorInfo(terminal).metadata?.taskId).toBe(task.id);
    const mismatch = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: message("more", { taskId: task.id, contextId: "other" }) },
      { key: carol.key },
    );
    expect(mismatch.body.error.code).toBe(-32602);
    expect(mismatch.body.error.data[1].fieldViolations[0].field).toBe("message.contextId");
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });

  test("data parts are checked against the profile's input schema, naming the field", async () => {
    const ok = await rpc(
      h.gateway.url,
      "SendMessage",
      {
        message: { ...message("x"), parts: [{ data: { city: "Paris", nights: 2 } }] },
        configuration: { returnImmediately: true },
      },
      { key, profile: "forms" },
    );
    expect(ok.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    const before = await keysUnder(h.redis, h.prefix);
    const bad = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: { ...message("x"), parts: [{ text: "hi" }, { data: { city: "P", nights: 0 } }] } },
      { key, profile: "forms" },
    );
    expect(bad.status).toBe(200);
    expect(bad.body.error.code).toBe(-32602);
    const fields = bad.body.error.data[1].fieldViolations.map((v: { field: string }) => v.field);
    expect(fields).toEqual(["message.parts[1].data.city", "message.parts[1].data.nights"]);
    const wrongType = await rpc(
      h.gateway.url,
      "SendMessage",
      { message: { ...message("x"), parts: [{ data: { city: "Rome" }, mediaType: "image/png" }] } },
      { key, profile: "forms" },
    );
    expect(wrongType.body.error.code).toBe(-32005);
    expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  });
});
