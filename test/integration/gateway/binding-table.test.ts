// One behaviour table, three bindings: each scenario (refusals with their reasons and Retry-After, the blocking
// deadline's 504 with the task id, isolation, limits, bad input) runs over JSON-RPC, over HTTP+JSON and over gRPC, and
// what a client observes is compared. Only the status differs (JSON-RPC answers an A2A error with HTTP 200, HTTP+JSON
// with §5.4's status, gRPC with the error table's code); the reason, message, metadata, details and headers (gRPC's
// trailing metadata) are the same, and no binding stores anything.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { A2aMethod } from "../../../src/protocol/index.ts";
import { closeGrpcClients, grpcCall, openGrpcStream } from "../../support/grpc-client.ts";
import { keysUnder, startRedis, type TestRedis } from "../../support/redis.ts";
import { openRestStream, openStream } from "../../support/sse-client.ts";
import { leaseCounts } from "../streams/helpers.ts";
import {
  details,
  eventually,
  type Harness,
  message,
  profile,
  type RpcAnswer,
  rest,
  rpc,
  startHarness,
} from "./harness.ts";

type Binding = "jsonrpc" | "rest" | "grpc";
const BINDINGS: readonly Binding[] = ["jsonrpc", "rest", "grpc"];

interface CallOptions {
  key?: string | undefined;
  profile?: string;
  version?: string | null;
}

/** What a client of either binding can read from an error answer, the HTTP status aside. */
interface Observed {
  status: number;
  reason?: string;
  message?: string;
  metadata?: Record<string, string>;
  /** The `@type` of each detail, in order. */
  detailTypes: string[];
  retryDelay?: string;
  violations?: unknown;
  retryAfter: string | null;
  wwwAuthenticate: string | null;
}

/** The HTTP+JSON request of a method's params: its route, its path fields and the rest as body or query. */
function restRequest(
  method: A2aMethod,
  params: Record<string, unknown>,
): { http: string; path: string; body?: unknown } {
  const { id, taskId, ...others } = params as { id?: string; taskId?: string } & Record<string, unknown>;
  const query = (fields: Record<string, unknown>) => {
    const search = new URLSearchParams(
      Object.entries(fields).map(([name, value]): [string, string] => [name, String(value)]),
    );
    return search.size === 0 ? "" : `?${search}`;
  };
  const task = encodeURIComponent(id ?? "");
  switch (method) {
    case "SendMessage":
      return { http: "POST", path: "/message:send", body: params };
    case "SendStreamingMessage":
      return { http: "POST", path: "/message:stream", body: params };
    case "GetTask":
      return { http: "GET", path: `/tasks/${task}${query(others)}` };
    case "ListTasks":
      return { http: "GET", path: `/tasks${query(params)}` };
    case "CancelTask":
      return { http: "POST", path: `/tasks/${task}:cancel`, body: others };
    case "SubscribeToTask":
      return { http: "POST", path: `/tasks/${task}:subscribe` };
    case "CreateTaskPushNotificationConfig":
      return { http: "POST", path: `/tasks/${encodeURIComponent(taskId ?? "")}/pushNotificationConfigs`, body: params };
    case "GetTaskPushNotificationConfig":
      return { http: "GET", path: `/tasks/${encodeURIComponent(taskId ?? "")}/pushNotificationConfigs/${task}` };
    default:
      throw new Error(`no route in this table for ${method}`);
  }
}

function observe(answer: RpcAnswer): Observed {
  const error = answer.body?.error;
  const found = error === undefined ? [] : details(answer);
  const info = found.find((d) => d["@type"].endsWith("ErrorInfo"));
  const observed: Observed = {
    status: answer.status,
    detailTypes: found.map((d) => d["@type"]),
    retryAfter: answer.headers.get("retry-after"),
    wwwAuthenticate: answer.headers.get("www-authenticate"),
  };
  if (error !== undefined) observed.message = error.message;
  if (info) {
    observed.reason = info.reason;
    if (info.metadata) observed.metadata = info.metadata;
  }
  const retry = found.find((d) => d["@type"].endsWith("RetryInfo"));
  if (retry) observed.retryDelay = retry.retryDelay;
  const badRequest = found.find((d) => d["@type"].endsWith("BadRequest"));
  if (badRequest) observed.violations = badRequest.fieldViolations;
  return observed;
}

/** The harness whose gateway serves `base`. */
function harnessAt(base: string): Harness {
  const found = [h, idle, quick].find((harness) => harness.gateway.url === base);
  if (!found) throw new Error(`no harness serves ${base}`);
  return found;
}

/** Calls `method` over `binding`; a success is observed as its status alone. */
async function call(
  base: string,
  binding: Binding,
  method: A2aMethod,
  params: Record<string, unknown>,
  options: CallOptions,
): Promise<Observed & { body: RpcAnswer["body"] }> {
  if (binding === "grpc") {
    const answer = await grpcCall(harnessAt(base).gateway.grpcAddress ?? "", method, params, options);
    // A success (gRPC OK) is observed as the HTTP bindings' 200.
    return { ...observe(answer.status === 0 ? { ...answer, status: 200 } : answer), body: answer.body };
  }
  if (binding === "jsonrpc") {
    const answer = await rpc(base, method, params, options);
    return { ...observe(answer), body: answer.body };
  }
  const { http, path, body } = restRequest(method, params);
  const answer = await rest(base, http, path, body, options);
  return { ...observe(answer), body: answer.body };
}

/** The gRPC code of the errors the table answers with each HTTP+JSON status (400 has two: pass it). */
const GRPC_CODE: Record<number, number> = { 401: 16, 403: 7, 404: 5, 413: 8, 429: 8, 503: 14, 504: 4 };
const INVALID_ARGUMENT = 3;
const FAILED_PRECONDITION = 9;

/** The status each binding answers an error with: the same HTTP status, or JSON-RPC's 200; and gRPC's code. */
function statuses(rest: number, jsonrpc = rest, grpc = GRPC_CODE[rest] ?? -1): Record<Binding, number> {
  return { jsonrpc, rest, grpc };
}

/** The observation with `value` (an id that differs from binding to binding) written as `name` in its metadata. */
function masked(seen: Observed, value: string, name: string): Observed {
  if (!seen.metadata) return seen;
  const metadata = Object.fromEntries(Object.entries(seen.metadata).map(([k, v]) => [k, v === value ? name : v]));
  return { ...seen, metadata };
}

/** What a client observes, without the HTTP status and the raw body. */
function observed(seen: Observed & { body?: unknown }): Omit<Observed, "status"> {
  const { status: _status, body: _body, ...rest } = seen;
  return rest;
}

/** Asserts that every binding's observation is the same but for the expected statuses; answers the JSON-RPC one. */
function sameObservation(seen: Record<Binding, Observed>, expected: Record<Binding, number>): Omit<Observed, "status"> {
  for (const binding of BINDINGS) expect(seen[binding].status).toBe(expected[binding]);
  expect(observed(seen.rest)).toEqual(observed(seen.jsonrpc));
  expect(observed(seen.grpc)).toEqual(observed(seen.jsonrpc));
  return observed(seen.jsonrpc);
}

let server: TestRedis;
/** The main installation: a live worker, a profile with a quota of one, small waiting and stream limits. */
let h: Harness;
/** The same Redis under another prefix, where no worker has ever beaten. */
let idle: Harness;
/** Its own Redis: a one-second blocking deadline, a one-second store deadline, one request per second per client. */
let quick: Harness;

beforeAll(async () => {
  server = await startRedis();
  h = await startHarness({
    server,
    profiles: [profile("echo"), profile("scarce", { quota: { maxActiveTasks: 1 } }), profile("other")],
    env: {
      A2A_SERVER_MAX_WAITING_REQUESTS: "2",
      A2A_CLIENTS_MAX_WAITING_REQUESTS: "1",
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "30",
      A2A_SERVER_MAX_STREAMS_PER_CLIENT: "1",
      A2A_SERVER_MAX_BODY_BYTES: "4096",
    },
    grpc: true,
  });
  await h.actor.live();
  idle = await startHarness({ server, grpc: true });
  quick = await startHarness({
    grpc: true,
    env: {
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "1",
      A2A_SERVER_STORE_TIMEOUT_SECONDS: "1",
      A2A_CLIENTS_REQUESTS_PER_SECOND: "1",
      A2A_CLIENTS_REQUEST_BURST: "4",
    },
  });
  await quick.actor.live();
});

afterAll(async () => {
  closeGrpcClients();
  await quick?.stop();
  await idle?.stop();
  await h?.stop();
  await server?.stop();
});

/** Runs `scenario` once per binding, checking each stored nothing, and answers what each observed. */
async function overBoth(
  harness: Harness,
  scenario: (binding: Binding) => Promise<Observed>,
): Promise<Record<Binding, Observed>> {
  const seen = {} as Record<Binding, Observed>;
  for (const binding of BINDINGS) {
    const before = await keysUnder(harness.redis, harness.prefix);
    seen[binding] = await scenario(binding);
    expect(await keysUnder(harness.redis, harness.prefix)).toEqual(before);
  }
  return seen;
}

const send = (text: string, returnImmediately = true) => ({
  message: message(text),
  configuration: { returnImmediately },
});

describe("refusals: the same reason, message, Retry-After and RetryInfo over every binding", () => {
  test("no live worker: 503 WORKER_UNAVAILABLE", async () => {
    const { key } = await idle.client();
    const seen = await overBoth(idle, (b) => call(idle.gateway.url, b, "SendMessage", send("anyone?"), { key }));
    const observed = sameObservation(seen, statuses(503));
    expect(observed).toMatchObject({ reason: "WORKER_UNAVAILABLE", retryAfter: "5", retryDelay: "5s" });
  });

  test("the client's limit of queued + running tasks: 503 CLIENT_TASK_LIMIT_EXCEEDED", async () => {
    const seen = {} as Record<Binding, Observed>;
    for (const binding of BINDINGS) {
      const { key, id } = await h.client({ limit: 1 });
      expect((await call(h.gateway.url, binding, "SendMessage", send("one"), { key })).status).toBe(200);
      const before = await keysUnder(h.redis, h.prefix);
      seen[binding] = masked(await call(h.gateway.url, binding, "SendMessage", send("two"), { key }), id, "<client>");
      expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
    }
    expect(sameObservation(seen, statuses(503))).toMatchObject({
      reason: "CLIENT_TASK_LIMIT_EXCEEDED",
      metadata: { clientId: "<client>" },
    });
  });

  test("a profile's quota over every client: 503 PROFILE_QUOTA_EXCEEDED", async () => {
    const seen = {} as Record<Binding, Observed>;
    for (const binding of BINDINGS) {
      const [holder, refused] = [await h.client(), await h.client()];
      const held = await call(h.gateway.url, binding, "SendMessage", send("hold"), {
        key: holder.key,
        profile: "scarce",
      });
      const before = await keysUnder(h.redis, h.prefix);
      seen[binding] = await call(h.gateway.url, binding, "SendMessage", send("no room"), {
        key: refused.key,
        profile: "scarce",
      });
      expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
      const taskId = held.body.task?.id ?? held.body.result.task.id;
      await call(h.gateway.url, binding, "CancelTask", { id: taskId }, { key: holder.key, profile: "scarce" });
    }
    const observed = sameObservation(seen, statuses(503));
    expect(observed).toMatchObject({ reason: "PROFILE_QUOTA_EXCEEDED", metadata: { profile: "scarce" } });
  });

  test("blocking requests waiting: 503 CLIENT_WAITING_… for the client's share, WAITING_… for the installation's", async () => {
    const byClient = {} as Record<Binding, Observed>;
    const byInstallation = {} as Record<Binding, Observed>;
    for (const binding of BINDINGS) {
      const [first, second, third] = [await h.client(), await h.client(), await h.client()];
      const waiting = [
        call(h.gateway.url, binding, "SendMessage", send("wait 1", false), { key: first.key }),
        call(h.gateway.url, binding, "SendMessage", send("wait 2", false), { key: second.key }),
      ];
      await eventually(async () => (await h.redis.zcard(h.keys.waiting())) === 2, 10_000);
      const before = await keysUnder(h.redis, h.prefix);
      byClient[binding] = await call(h.gateway.url, binding, "SendMessage", send("my second", false), {
        key: first.key,
      });
      byInstallation[binding] = await call(h.gateway.url, binding, "SendMessage", send("a third", false), {
        key: third.key,
      });
      expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
      for (const client of [first, second]) await h.actor.complete(await h.actor.takeOne({ clientId: client.id }));
      for (const answer of await Promise.all(waiting)) expect(answer.status).toBe(200);
    }
    expect(sameObservation(byClient, statuses(503))).toMatchObject({
      reason: "CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED",
      metadata: { limit: "1" },
    });
    expect(sameObservation(byInstallation, statuses(503))).toMatchObject({
      reason: "WAITING_REQUESTS_LIMIT_EXCEEDED",
      metadata: { limit: "2" },
    });
  });

  test("a client's open streams: 503 STREAMS_PER_CLIENT_LIMIT_EXCEEDED; the open stream is untouched", async () => {
    const seen = {} as Record<Binding, Observed>;
    for (const binding of BINDINGS) {
      const client = await h.client();
      const created = await call(h.gateway.url, binding, "SendMessage", send("watch me"), { key: client.key });
      const taskId: string = created.body.task?.id ?? created.body.result.task.id;
      const open =
        binding === "jsonrpc"
          ? await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key })
          : binding === "rest"
            ? await openRestStream(h.gateway.url, "GET", `/tasks/${taskId}:subscribe`, undefined, { key: client.key })
            : await openGrpcStream(h.gateway.grpcAddress ?? "", "SubscribeToTask", { id: taskId }, { key: client.key });
      await open.waitForEvents(1);
      const before = await keysUnder(h.redis, h.prefix);
      seen[binding] = await call(h.gateway.url, binding, "SubscribeToTask", { id: taskId }, { key: client.key });
      expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
      expect(open.ended).toBe(false);
      open.abort();
      await eventually(async () => (await leaseCounts(h, client.id)).client === 0, 10_000);
      await call(h.gateway.url, binding, "CancelTask", { id: taskId }, { key: client.key });
    }
    expect(sameObservation(seen, statuses(503))).toMatchObject({ reason: "STREAMS_PER_CLIENT_LIMIT_EXCEEDED" });
  });

  test("a client past its request rate: 429 RATE_LIMIT_EXCEEDED, before anything else", async () => {
    const seen = {} as Record<Binding, Observed>;
    for (const binding of BINDINGS) {
      const { key } = await quick.client();
      // The first request creates the client's bucket; from then on nothing is written for a refused one.
      await call(quick.gateway.url, binding, "GetTask", { id: "t-missing" }, { key });
      const before = await keysUnder(quick.redis, quick.prefix);
      for (let i = 0; i < 20 && seen[binding] === undefined; i++) {
        const answer = await call(quick.gateway.url, binding, "GetTask", { id: "t-missing" }, { key });
        if (answer.status === statuses(429)[binding]) seen[binding] = answer;
      }
      expect(await keysUnder(quick.redis, quick.prefix)).toEqual(before);
    }
    const observed = sameObservation(seen, statuses(429));
    expect(observed).toMatchObject({ reason: "RATE_LIMIT_EXCEEDED", retryAfter: "1", retryDelay: "1s" });
  });
});

describe("credentials, version and input", () => {
  test("no key and a wrong key: 401 with the same challenge", async () => {
    for (const key of [undefined, "wrong"]) {
      const seen = await overBoth(h, (b) => call(h.gateway.url, b, "GetTask", { id: "x" }, { key }));
      expect(sameObservation(seen, statuses(401))).toMatchObject({
        reason: "UNAUTHENTICATED",
        wwwAuthenticate: 'Bearer realm="a2a-runtime"',
      });
    }
  });

  test("a profile the client may not use: 403 PERMISSION_DENIED", async () => {
    const { key } = await h.client({ profiles: ["echo"] });
    const seen = await overBoth(h, (b) => call(h.gateway.url, b, "GetTask", { id: "x" }, { key, profile: "other" }));
    expect(sameObservation(seen, statuses(403))).toMatchObject({ reason: "PERMISSION_DENIED" });
  });

  test("another A2A-Version: VERSION_NOT_SUPPORTED (JSON-RPC 200, HTTP+JSON 400), each naming what it serves", async () => {
    const { key } = await h.client();
    const seen = await overBoth(h, (b) => call(h.gateway.url, b, "ListTasks", {}, { key, version: "2.0" }));
    // The JSON-RPC endpoint also serves A2A 0.3 (to clients without the header); the HTTP+JSON routes serve 1.0 only.
    const { message: jsonRpcMessage, metadata: jsonRpcMetadata, ...jsonRpc } = observed(seen.jsonrpc);
    const { message: restMessage, metadata: restMetadata, ...rest } = observed(seen.rest);
    expect([seen.rest.status, seen.jsonrpc.status, seen.grpc.status]).toEqual([400, 200, FAILED_PRECONDITION]);
    expect(rest).toEqual(jsonRpc);
    // gRPC serves 1.0 only, as HTTP+JSON does.
    expect(observed(seen.grpc)).toEqual(observed(seen.rest));
    expect(jsonRpc).toMatchObject({ reason: "VERSION_NOT_SUPPORTED" });
    expect([jsonRpcMetadata, restMetadata]).toEqual([
      { requested: "2.0", served: "1.0,0.3" },
      { requested: "2.0", served: "1.0" },
    ]);
    expect([jsonRpcMessage, restMessage]).toEqual([
      "A2A-Version 2.0 is not served; this interface serves 1.0, 0.3",
      "A2A-Version 2.0 is not served; this interface serves 1.0",
    ]);
  });

  test("a body over the cap: 413; nesting past the limit: INVALID_REQUEST with the same message", async () => {
    const { key } = await h.client();
    const large = await overBoth(h, (b) => call(h.gateway.url, b, "SendMessage", send("x".repeat(5000)), { key }));
    expect(sameObservation(large, statuses(413))).toMatchObject({ reason: "PAYLOAD_TOO_LARGE" });
    let deep: unknown = {};
    for (let i = 0; i < 40; i++) deep = { deeper: deep };
    const nested = await overBoth(h, (b) =>
      call(h.gateway.url, b, "SendMessage", { ...send("deep"), metadata: { deep } }, { key }),
    );
    expect(sameObservation(nested, statuses(400, 200, INVALID_ARGUMENT))).toMatchObject({
      reason: "INVALID_REQUEST",
      message: "JSON nesting is deeper than 32 levels",
    });
  });

  test("params that fail the schema: INVALID_PARAMS with the same field violations", async () => {
    const { key } = await h.client();
    // An enum value the proto does not have: by name in JSON; gRPC's binary can only carry an unknown number.
    const cases: [A2aMethod, Record<string, unknown>, Record<string, unknown>?][] = [
      ["SendMessage", { configuration: { returnImmediately: true } }],
      ["ListTasks", { pageSize: 101 }],
      ["ListTasks", { status: "TASK_STATE_RUNNING" }, { status: 99 }],
      ["GetTask", { id: "t", historyLength: -1 }],
    ];
    for (const [method, params, grpcParams = params] of cases) {
      const seen = await overBoth(h, (b) =>
        call(h.gateway.url, b, method, b === "grpc" ? grpcParams : params, { key }),
      );
      const observed = sameObservation(seen, statuses(400, 200, INVALID_ARGUMENT));
      expect(observed.reason).toBe("INVALID_PARAMS");
      expect(observed.violations).toBeDefined();
    }
  });
});

describe("tasks", () => {
  test("another client's task is a 404 exactly like a missing one, on every method that names a task", async () => {
    const owner = await h.client();
    const other = await h.client();
    const created = await rpc(h.gateway.url, "SendMessage", send("mine alone"), { key: owner.key });
    const taskId: string = created.body.result.task.id;
    const missing = "01NOSUCHTASK0000000000000";
    const calls: [A2aMethod, (id: string) => Record<string, unknown>][] = [
      ["GetTask", (id) => ({ id })],
      ["CancelTask", (id) => ({ id })],
      ["SubscribeToTask", (id) => ({ id })],
      ["SendMessage", (id) => ({ message: { ...message("hi", { taskId: id }), messageId: "fixed-id" } })],
      ["CreateTaskPushNotificationConfig", (id) => ({ taskId: id, url: "https://hooks.example.com/x" })],
      ["GetTaskPushNotificationConfig", (id) => ({ taskId: id, id: "hook" })],
    ];
    for (const [method, params] of calls) {
      const seen = await overBoth(h, async (b) => {
        const foreign = await call(h.gateway.url, b, method, params(taskId), { key: other.key });
        const absent = await call(h.gateway.url, b, method, params(missing), { key: other.key });
        // Byte for byte the same answer, but for the id the client named.
        expect(JSON.stringify(foreign.body).replaceAll(taskId, "<id>")).toBe(
          JSON.stringify(absent.body).replaceAll(missing, "<id>"),
        );
        expect(observed(masked(foreign, taskId, "<id>"))).toEqual(observed(masked(absent, missing, "<id>")));
        return masked(foreign, taskId, "<id>");
      });
      expect(sameObservation(seen, statuses(404, 200))).toMatchObject({ reason: "TASK_NOT_FOUND" });
    }
    const still = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: owner.key });
    expect(still.body.result.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  test("a completed task: TASK_NOT_CANCELABLE and UNSUPPORTED_OPERATION with the same message and task id", async () => {
    const { key, id: clientId } = await h.client();
    const created = await rpc(h.gateway.url, "SendMessage", send("finish"), { key });
    const taskId: string = created.body.result.task.id;
    await h.actor.complete(await h.actor.takeOne({ taskId, clientId }));
    const cancel = await overBoth(h, (b) => call(h.gateway.url, b, "CancelTask", { id: taskId }, { key }));
    expect(sameObservation(cancel, statuses(400, 200, FAILED_PRECONDITION))).toMatchObject({
      reason: "TASK_NOT_CANCELABLE",
      metadata: { taskId },
    });
    const subscribe = await overBoth(h, (b) => call(h.gateway.url, b, "SubscribeToTask", { id: taskId }, { key }));
    expect(sameObservation(subscribe, statuses(400, 200, FAILED_PRECONDITION))).toMatchObject({
      reason: "UNSUPPORTED_OPERATION",
      metadata: { taskId },
    });
  });
});

describe("deadlines", () => {
  test("the blocking deadline: 504 BLOCKING_DEADLINE_EXCEEDED with the task id; the task goes on", async () => {
    const seen = {} as Record<Binding, Observed>;
    const tasks: string[] = [];
    for (const binding of BINDINGS) {
      const client = await quick.client();
      const pending = call(quick.gateway.url, binding, "SendMessage", send("too slow", false), { key: client.key });
      const claim = await quick.actor.takeOne({ clientId: client.id }, 10_000);
      await quick.actor.move(claim, "TASK_STATE_WORKING");
      seen[binding] = await pending;
      expect(seen[binding].metadata?.taskId).toBe(claim.taskId);
      const running = await call(quick.gateway.url, binding, "GetTask", { id: claim.taskId }, { key: client.key });
      expect(running.body.status?.state ?? running.body.result.status.state).toBe("TASK_STATE_WORKING");
      tasks.push(claim.taskId);
      seen[binding] = masked(seen[binding], claim.taskId, "<id>");
    }
    expect(sameObservation(seen, statuses(504))).toMatchObject({
      reason: "BLOCKING_DEADLINE_EXCEEDED",
      metadata: { taskId: "<id>", blockingWaitSeconds: "1" },
    });
    expect(new Set(tasks).size).toBe(BINDINGS.length);
  });

  test("a paused Redis: 503 STORE_TIMEOUT within the store deadline, from every binding", async () => {
    const [a, b, c] = [await quick.client(), await quick.client(), await quick.client()];
    const pausing = quick.server.client();
    await pausing.call("CLIENT", "PAUSE", "4000", "ALL");
    try {
      const [jsonrpc, restful, grpc] = await Promise.all([
        call(quick.gateway.url, "jsonrpc", "GetTask", { id: "t-paused" }, { key: a.key }),
        call(quick.gateway.url, "rest", "GetTask", { id: "t-paused" }, { key: b.key }),
        call(quick.gateway.url, "grpc", "GetTask", { id: "t-paused" }, { key: c.key }),
      ]);
      expect(sameObservation({ jsonrpc, rest: restful, grpc }, statuses(503))).toMatchObject({
        reason: "STORE_TIMEOUT",
        retryAfter: "1",
        metadata: { timeoutSeconds: "1" },
      });
    } finally {
      await pausing.call("CLIENT", "UNPAUSE");
      pausing.disconnect();
    }
  });
});
