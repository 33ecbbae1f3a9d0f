// The A2A 0.3 dialect over raw HTTP (the SDK-driven matrix is in interop/): which requests are read as 0.3, what a
// request that mixes the versions gets, -32602 naming 0.3 fields, data that is not an object, streams whose failures
// arrive as an SSE error event, and that a 0.3 task is stored as 1.0 (a 1.0 client reads it).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { openStream } from "../../support/sse-client.ts";
import { errorInfo, type Harness, profile, rpc, startHarness } from "./harness.ts";

let h: Harness;
let key: string;
let clientId: string;
let counter = 0;

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("quiet", { streaming: false })] });
  await h.actor.live();
  ({ id: clientId, key } = await h.client());
});

afterAll(async () => {
  await h.stop();
});

function v03Message(parts: unknown[], extra: Record<string, unknown> = {}) {
  counter += 1;
  return { kind: "message", messageId: `v03-${Date.now()}-${counter}`, role: "user", parts, ...extra };
}

const noHeader = () => ({ key, version: null });

test("without A2A-Version, and with 0.3 or 0.3.x, the endpoint speaks 0.3", async () => {
  for (const version of [null, "", "0.3", "0.3.0"]) {
    const answer = await rpc(h.gateway.url, "tasks/get", { id: "missing" }, { key, version });
    expect(answer.status).toBe(200);
    expect(answer.body.error).toMatchObject({ code: -32001, message: "Task not found" });
  }
});

test("a 1.0 method without the header is -32009 saying which header to send; other versions too", async () => {
  const answer = await rpc(h.gateway.url, "SendMessage", {}, noHeader());
  expect(answer.status).toBe(200);
  expect(answer.body.error.code).toBe(-32009);
  expect(answer.body.error.message).toContain('send the header "A2A-Version: 1.0"');
  expect(errorInfo(answer)).toMatchObject({ reason: "VERSION_NOT_SUPPORTED", metadata: { requested: "0.3" } });
  const listed = await rpc(h.gateway.url, "ListTasks", {}, { key, version: "0.3" });
  expect(listed.body.error.code).toBe(-32009);
  const future = await rpc(h.gateway.url, "message/send", {}, { key, version: "2.0" });
  expect(future.body.error.code).toBe(-32009);
  expect(future.body.error.message).toContain("serves 1.0, 0.3");
});

test("a 0.3 method with A2A-Version 1.0 is -32601 naming its 1.0 name; an unknown method is -32601 in both", async () => {
  const answer = await rpc(h.gateway.url, "message/send", {}, { key });
  expect(answer.body.error.code).toBe(-32601);
  expect(answer.body.error.message).toContain("SendMessage");
  for (const version of [null, "1.0"]) {
    const unknown = await rpc(h.gateway.url, "tasks/list", {}, { key, version });
    expect(unknown.body.error.code).toBe(-32601);
  }
});

test("bad 0.3 params are -32602 naming the 0.3 field, and nothing is stored", async () => {
  const before = await keysUnder(h.redis, h.prefix);
  const cases: [unknown, string][] = [
    [{ message: v03Message([{ kind: "text" }]) }, "message.parts[0]"],
    [{ message: v03Message([{ kind: "file", file: { mimeType: "text/plain" } }]) }, "message.parts[0].file"],
    [{ message: { ...v03Message([{ kind: "text", text: "x" }]), role: "ROLE_USER" } }, "message.role"],
    [
      { message: v03Message([{ kind: "text", text: "x" }]), configuration: { blocking: "yes" } },
      "configuration.blocking",
    ],
  ];
  for (const [params, field] of cases) {
    const answer = await rpc(h.gateway.url, "message/send", params, noHeader());
    expect(answer.body.error.code).toBe(-32602);
    expect(answer.body.error.message).toContain(field);
  }
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
});

test("a 0.3 task is stored as 1.0: a 1.0 client reads it; a non-object data value survives both ways", async () => {
  const sent = await rpc(
    h.gateway.url,
    "message/send",
    {
      message: v03Message([
        { kind: "text", text: "hello", extra: "dropped" },
        { kind: "data", data: { value: [1, 2, 3] }, metadata: { data_part_compat: true } },
        { kind: "file", file: { uri: "https://files.example.com/a.txt", mimeType: "text/plain", name: "a.txt" } },
      ]),
      configuration: { blocking: false },
    },
    noHeader(),
  );
  const task = sent.body.result;
  expect(task).toMatchObject({ kind: "task", status: { state: "submitted" } });
  const v1 = await rpc(h.gateway.url, "GetTask", { id: task.id }, { key });
  expect(v1.body.result.status.state).toBe("TASK_STATE_SUBMITTED");
  expect(v1.body.result.history[0].parts).toEqual([
    { text: "hello" },
    { data: [1, 2, 3] },
    { url: "https://files.example.com/a.txt", mediaType: "text/plain", filename: "a.txt" },
  ]);
  expect(v1.body.result.history[0].role).toBe("ROLE_USER");
  const v03 = await rpc(h.gateway.url, "tasks/get", { id: task.id }, noHeader());
  expect(v03.body.result.history[0].parts).toEqual([
    { kind: "text", text: "hello" },
    { kind: "data", data: { value: [1, 2, 3] }, metadata: { data_part_compat: true } },
    { kind: "file", file: { uri: "https://files.example.com/a.txt", mimeType: "text/plain", name: "a.txt" } },
  ]);
  await h.actor.complete(await h.actor.takeOne({ taskId: task.id }, 10_000));
});

test("0.3 streams: results are 0.3 events; a failure after the params passed is an SSE error event", async () => {
  const stream = await openStream(
    h.gateway.url,
    "message/stream",
    { message: v03Message([{ kind: "text", text: "stream" }]) },
    { key, version: null, id: "s-1" },
  );
  const claim = await h.actor.takeOne({ clientId }, 10_000);
  await h.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "more please" });
  await stream.closed;
  expect(stream.messages.map((frame) => frame.id)).toEqual(["s-1", "s-1"]);
  expect(stream.results[0]).toMatchObject({ kind: "task", status: { state: "submitted" } });
  expect(stream.results[1]).toMatchObject({
    kind: "status-update",
    status: { state: "input-required", message: { kind: "message", role: "agent" } },
    final: true,
  });

  const missing = await openStream(
    h.gateway.url,
    "message/stream",
    { message: v03Message([{ kind: "text", text: "x" }], { taskId: "no-such-task" }) },
    { key, version: null, id: "s-2" },
  );
  await missing.closed;
  expect(missing.status).toBe(200);
  expect(missing.contentType).toStartWith("text/event-stream");
  expect(missing.events.map((event) => event.event)).toEqual(["error"]);
  expect(missing.messages[0]).toMatchObject({ id: "s-2", error: { code: -32001 } });

  const quiet = await openStream(
    h.gateway.url,
    "tasks/resubscribe",
    { id: claim.taskId },
    { key, version: null, profile: "quiet" },
  );
  await quiet.closed;
  expect(quiet.messages[0]).toMatchObject({ error: { code: -32004 } });

  // Params that fail their check are a plain JSON answer, as the 0.3 reference server sends them.
  const bad = await openStream(
    h.gateway.url,
    "message/stream",
    { message: { kind: "message" } },
    { key, version: null },
  );
  expect(bad.contentType).toBe("application/json");
  expect(bad.json.error.code).toBe(-32602);
});
