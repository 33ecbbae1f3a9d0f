// Bad input of every kind gets a clear JSON-RPC error, stores nothing, and leaves the gateway answering.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { errorInfo, type Harness, message, post, type RpcAnswer, rpc, startHarness } from "./harness.ts";

let h: Harness;
let key: string;
let before: string[];

beforeAll(async () => {
  h = await startHarness({ env: { A2A_SERVER_MAX_BODY_BYTES: "4096" } });
  await h.actor.live();
  key = (await h.client()).key;
  before = await keysUnder(h.redis, h.prefix);
});

afterAll(async () => {
  await h.stop();
});

/** Nothing was stored, and the gateway still serves a good request. */
async function unharmed(): Promise<void> {
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  const good = await rpc(h.gateway.url, "ListTasks", {}, { key });
  expect(good.status).toBe(200);
  expect(good.body.result.totalSize).toBe(0);
}

function violations(answer: RpcAnswer): { field: string; description: string }[] {
  return answer.body.error.data.find(
    (detail: { "@type": string }) => detail["@type"] === "type.googleapis.com/google.rpc.BadRequest",
  ).fieldViolations;
}

test("malformed JSON is -32700 with id null", async () => {
  for (const body of ['{"jsonrpc":"2.0","id":1,', "", "\u00ff\u00fe", "nul"]) {
    const answer = await post(h.gateway.url, body, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBeNull();
    expect(answer.body.error.code).toBe(-32700);
    expect(answer.body.error.message).toBe("Invalid JSON payload");
  }
  await unharmed();
});

test("JSON that is not a JSON-RPC request is -32600", async () => {
  const bodies = [
    "[]",
    '[{"jsonrpc":"2.0","id":1,"method":"ListTasks"}]',
    '"SendMessage"',
    "42",
    '{"id":3,"method":"ListTasks"}',
    '{"jsonrpc":"1.0","id":3,"method":"ListTasks"}',
    '{"jsonrpc":"2.0","id":3}',
    '{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":[1,2]}',
  ];
  for (const body of bodies) {
    const answer = await post(h.gateway.url, body, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32600);
  }
  const withId = await post(h.gateway.url, '{"jsonrpc":"1.0","id":"keep-me","method":"GetTask"}', { key });
  expect(withId.body.id).toBe("keep-me");
  await unharmed();
});

test("an unknown method (the 0.3 names too) is -32601", async () => {
  for (const method of ["message/send", "tasks/get", "sendMessage", "Nope"]) {
    const answer = await rpc(h.gateway.url, method, {}, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32601);
    expect(answer.body.error.message).toContain(method);
  }
  await unharmed();
});

test("wrong params are -32602 naming the field: missing, wrong types, unknown enums, strings for objects", async () => {
  const cases: [string, unknown, string][] = [
    ["SendMessage", {}, "message"],
    ["SendMessage", { message: "hello" }, "message"],
    ["SendMessage", { message: { ...message("x"), role: "user" } }, "message.role"],
    ["SendMessage", { message: { ...message("x"), role: "ROLE_AGENT" } }, "message.role"],
    ["SendMessage", { message: { ...message("x"), parts: [] } }, "message.parts"],
    ["SendMessage", { message: { ...message("x"), parts: [{ kind: "text", text: 1 }] } }, "message.parts[0].text"],
    ["SendMessage", { message: message("x"), configuration: { historyLength: "five" } }, "configuration.historyLength"],
    ["SendMessage", { message: message("x"), configuration: { historyLength: -1 } }, "configuration.historyLength"],
    [
      "SendMessage",
      { message: message("x"), configuration: { returnImmediately: "yes" } },
      "configuration.returnImmediately",
    ],
    ["SendMessage", { message: message("x"), metadata: "meta" }, "metadata"],
    ["GetTask", {}, "id"],
    ["GetTask", { id: 7 }, "id"],
    ["ListTasks", { status: "TASK_STATE_RUNNING" }, "status"],
    ["ListTasks", { status: "completed" }, "status"],
    ["ListTasks", { pageSize: 0 }, "pageSize"],
    ["ListTasks", { statusTimestampAfter: "2026-01-05T10:00:00+02:00" }, "statusTimestampAfter"],
    ["ListTasks", { includeArtifacts: "true" }, "includeArtifacts"],
    ["CancelTask", { id: "" }, "id"],
  ];
  for (const [method, params, field] of cases) {
    const answer = await rpc(h.gateway.url, method, params, { key });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32602);
    expect(violations(answer)[0]?.field).toBe(field);
    expect(answer.body.error.message).toContain(field);
  }
  await unharmed();
});

test("a body over server.maxBodyBytes is HTTP 413 with -32600, declared or not", async () => {
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: { message: message("x".repeat(5000)), configuration: { returnImmediately: true } },
  });
  const declared = await post(h.gateway.url, big, { key });
  expect(declared.status).toBe(413);
  expect(declared.body.error.code).toBe(-32600);
  expect(errorInfo(declared)).toMatchObject({ reason: "PAYLOAD_TOO_LARGE", metadata: { limitBytes: "4096" } });

  const encoder = new TextEncoder();
  const chunked = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < big.length; i += 1000) controller.enqueue(encoder.encode(big.slice(i, i + 1000)));
      controller.close();
    },
  });
  const response = await fetch(`${h.gateway.url}/a2a/echo`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
    body: chunked,
  });
  expect(response.status).toBe(413);
  expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  await unharmed();
});

test("A2A-Version absent, 0.3 or 2.0 is -32009 naming the served version; 1.0.x is served", async () => {
  for (const version of [null, "", "0.3", "2.0", "1.1"]) {
    const answer = await rpc(h.gateway.url, "ListTasks", {}, { key, version });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32009);
    expect(answer.body.error.message).toContain("1.0");
    expect(errorInfo(answer).reason).toBe("VERSION_NOT_SUPPORTED");
  }
  const patch = await rpc(h.gateway.url, "ListTasks", {}, { key, version: "1.0.3" });
  expect(patch.body.result).toBeDefined();
  const viaQuery = await fetch(`${h.gateway.url}/a2a/echo?A2A-Version=1.0`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks" }),
  });
  expect(((await viaQuery.json()) as { result: { totalSize: number } }).result.totalSize).toBe(0);
  await unharmed();
});

test("credentials are checked before params and version: no key and bad params is 401", async () => {
  const answer = await rpc(h.gateway.url, "SendMessage", { message: "oops" }, { version: null });
  expect(answer.status).toBe(401);
  await unharmed();
});

test("an unknown path is 404", async () => {
  const answer = await post(h.gateway.url.replace(/\/?$/, "/nowhere"), "{}", { key });
  expect(answer.status).toBe(404);
  const profile = await rpc(h.gateway.url, "ListTasks", {}, { key, profile: "no-such-profile" });
  expect(profile.status).toBe(404);
  expect(profile.body.error.code).toBe(-32600);
  await unharmed();
});

test("nesting deeper than server.maxJsonDepth is -32600 before it is parsed; within it the request is served", async () => {
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  // The envelope and params take 2 levels: metadata nested 40 deep makes 42 (> 32); 20 deep makes 22.
  const deep = `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t-x","metadata":${nested(40)}}}`;
  const refused = await post(h.gateway.url, deep, { key });
  expect(refused.status).toBe(200);
  expect(refused.body.id).toBeNull();
  expect(refused.body.error.code).toBe(-32600);
  expect(refused.body.error.message).toBe("JSON nesting is deeper than 32 levels");
  const arrays = `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t-x","x":${"[".repeat(1000)}${"]".repeat(1000)}}}`;
  expect((await post(h.gateway.url, arrays, { key })).body.error.code).toBe(-32600);
  // Brackets inside strings do not count.
  const quoted = `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"${"[{".repeat(100)}"}}`;
  expect((await post(h.gateway.url, quoted, { key })).body.error.code).toBe(-32001);
  const shallow = `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"t-x","metadata":${nested(20)}}}`;
  expect((await post(h.gateway.url, shallow, { key })).body.error.code).toBe(-32001);
  await unharmed();
});

test("ids, lists and metadata past their bounds are -32602 naming the field; nothing is stored", async () => {
  const cases: [unknown, string][] = [
    [{ message: message("hi", { messageId: "m".repeat(257) }) }, "message.messageId"],
    [{ message: message("hi", { contextId: "c".repeat(257) }) }, "message.contextId"],
    [{ message: { ...message("hi"), parts: Array.from({ length: 257 }, () => ({ text: "p" })) } }, "message.parts"],
    [
      { message: message("hi", { referenceTaskIds: Array.from({ length: 65 }, (_, i) => `t${i}`) }) },
      "message.referenceTaskIds",
    ],
  ];
  const wide = await startHarness({ server: h.server, env: { A2A_SERVER_MAX_BODY_BYTES: "200000" } });
  try {
    await wide.actor.live();
    const wideKey = (await wide.client()).key;
    const stored = await keysUnder(wide.redis, wide.prefix);
    cases.push([{ message: message("hi"), metadata: { blob: "x".repeat(70_000) } }, "metadata"]);
    for (const [params, field] of cases) {
      const immediate = { ...(params as object), configuration: { returnImmediately: true } };
      const answer = await rpc(wide.gateway.url, "SendMessage", immediate, { key: wideKey });
      expect(answer.body.error?.code).toBe(-32602);
      expect(violations(answer)[0]?.field).toBe(field);
    }
    const id = await rpc(wide.gateway.url, "GetTask", { id: "t".repeat(257) }, { key: wideKey });
    expect(id.body.error.code).toBe(-32602);
    expect(violations(id)[0]?.field).toBe("id");
    expect(await keysUnder(wide.redis, wide.prefix)).toEqual(stored);
  } finally {
    await wide.stop();
  }
});

test("a request without a valid key is refused before its body is read: 401 even for a body that is not JSON", async () => {
  // Before the fix the body (up to server.maxBodyBytes) was read and parsed first: a keyless flood cost every client.
  for (const body of ["not json at all", "{".repeat(3000), ""]) {
    for (const credentials of [undefined, "a2a_made-up-key"]) {
      const answer = await post(h.gateway.url, body, credentials === undefined ? {} : { key: credentials });
      expect(answer.status).toBe(401);
      expect(answer.body.id).toBeNull();
      expect(answer.body.error.code).toBe(-32000);
    }
  }
  // With the key, the same bodies are the parse and nesting errors they are.
  expect((await post(h.gateway.url, "not json at all", { key })).body.error.code).toBe(-32700);
  expect((await post(h.gateway.url, "{".repeat(3000), { key })).body.error.code).toBe(-32600);
  await unharmed();
});
