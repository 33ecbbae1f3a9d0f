// Every kind of error the HTTP+JSON binding answers, over real HTTP: a google.rpc.Status body with the error table's
// HTTP status, an ErrorInfo (and BadRequest, RetryInfo where they apply) and headers; checked in the JSON-RPC binding's
// order (credentials before the body is read), nothing stored, and the gateway unharmed afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { openRestStream } from "../../support/sse-client.ts";
import {
  errorInfo,
  fieldViolations,
  type Harness,
  message,
  profile,
  type RpcAnswer,
  rest,
  startHarness,
} from "./harness.ts";

let h: Harness;
let key: string;
let clientId: string;

beforeAll(async () => {
  h = await startHarness({
    profiles: [
      profile("echo", { inputModes: ["text/plain"] }),
      profile("quiet", { streaming: false, pushNotifications: false }),
      profile("private"),
    ],
    env: { A2A_SERVER_MAX_BODY_BYTES: "4096" },
  });
  await h.actor.live();
  ({ key, id: clientId } = await h.client({ profiles: ["echo", "quiet"] }));
});

afterAll(async () => {
  await h.stop();
});

/** The answer is a google.rpc.Status with `status` as HTTP status, `grpc` as its status name and `reason`. */
function expectStatus(answer: RpcAnswer, status: number, grpc: string, reason: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toBe("application/a2a+json");
  expect(answer.headers.get("cache-control")).toBe("no-store");
  expect(answer.body.error.code).toBe(status);
  expect(answer.body.error.status).toBe(grpc);
  expect(typeof answer.body.error.message).toBe("string");
  expect(errorInfo(answer).reason).toBe(reason);
}

/** Runs `refused` and checks that it stored nothing; the gateway serves a good request afterwards. */
async function storesNothing(refused: () => Promise<void>): Promise<void> {
  const before = await keysUnder(h.redis, h.prefix);
  await refused();
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  expect((await rest(h.gateway.url, "GET", "/tasks", undefined, { key })).status).toBe(200);
}

async function task(text: string, profileName = "echo"): Promise<string> {
  const answer = await rest(
    h.gateway.url,
    "POST",
    "/message:send",
    { message: message(text), configuration: { returnImmediately: true } },
    { key, profile: profileName },
  );
  return answer.body.task.id;
}

describe("paths and HTTP methods (answered before the credentials: no Redis is read)", () => {
  test("an unknown profile or route is 404; another HTTP method is 405 with Allow; bad percent-encoding is 400", async () => {
    const unknownProfile = await rest(h.gateway.url, "GET", "/tasks", undefined, { profile: "nope" });
    expectStatus(unknownProfile, 404, "UNIMPLEMENTED", "NOT_FOUND");
    expect(errorInfo(unknownProfile).metadata).toEqual({ path: "/a2a/nope/tasks" });
    expectStatus(await rest(h.gateway.url, "GET", "/task"), 404, "UNIMPLEMENTED", "NOT_FOUND");
    expectStatus(await rest(h.gateway.url, "POST", "/messages:send", {}), 404, "UNIMPLEMENTED", "NOT_FOUND");
    const wrongMethod = await rest(h.gateway.url, "DELETE", "/tasks/t-1:subscribe");
    expectStatus(wrongMethod, 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED");
    expect(wrongMethod.headers.get("allow")).toBe("GET, POST");
    const get = await rest(h.gateway.url, "GET", "/message:send");
    expect(get.headers.get("allow")).toBe("POST");
    expectStatus(await rest(h.gateway.url, "GET", "/tasks/%E0%A4%A"), 400, "INVALID_ARGUMENT", "INVALID_REQUEST");
  });
});

describe("credentials, permission, version: before a byte of the body is read", () => {
  test("no key, a wrong key: 401 with WWW-Authenticate, even for a body that is not JSON or too large", async () => {
    await storesNothing(async () => {
      for (const options of [{}, { key: "wrong-key" }]) {
        const answer = await rest(h.gateway.url, "POST", "/message:send", "not json", options);
        expectStatus(answer, 401, "UNAUTHENTICATED", "UNAUTHENTICATED");
        expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="a2a-runtime"');
      }
      const large = await rest(h.gateway.url, "POST", "/message:send", "x".repeat(10_000), { key: "wrong-key" });
      expect(large.status).toBe(401);
    });
  });

  test("a profile the client may not use is 403 PERMISSION_DENIED", async () => {
    const answer = await rest(h.gateway.url, "GET", "/tasks", undefined, { key, profile: "private" });
    expectStatus(answer, 403, "PERMISSION_DENIED", "PERMISSION_DENIED");
  });

  test("A2A-Version absent, 0.3 or 2.0 is 400 VERSION_NOT_SUPPORTED, before the body", async () => {
    for (const version of [null, "0.3", "2.0"]) {
      const answer = await rest(h.gateway.url, "POST", "/message:send", "not json", { key, version });
      expectStatus(answer, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
      expect(errorInfo(answer).metadata?.served).toBe("1.0");
    }
  });
});

describe("the body", () => {
  test("another Content-Type is 415 CONTENT_TYPE_NOT_SUPPORTED, unread", async () => {
    await storesNothing(async () => {
      const answer = await rest(h.gateway.url, "POST", "/message:send", "message=hi", {
        key,
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      });
      expectStatus(answer, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
      expect(errorInfo(answer).metadata).toEqual({ mediaType: "application/x-www-form-urlencoded" });
    });
  });

  test("not JSON is PARSE_ERROR; JSON that is not an object, or nested too deep, is INVALID_REQUEST", async () => {
    await storesNothing(async () => {
      for (const body of ['{"message":', "\u00ff", "nul"]) {
        const answer = await rest(h.gateway.url, "POST", "/message:send", body, { key });
        expectStatus(answer, 400, "INVALID_ARGUMENT", "PARSE_ERROR");
        expect(answer.body.error.message).toBe("Invalid JSON payload");
      }
      for (const body of ["[]", '"hello"', "42", "null"]) {
        expectStatus(
          await rest(h.gateway.url, "POST", "/message:send", body, { key }),
          400,
          "INVALID_ARGUMENT",
          "INVALID_REQUEST",
        );
      }
      const deep = `${"[".repeat(40)}${"]".repeat(40)}`;
      const nested = await rest(h.gateway.url, "POST", "/message:send", `{"metadata":${deep}}`, { key });
      expectStatus(nested, 400, "INVALID_ARGUMENT", "INVALID_REQUEST");
      expect(nested.body.error.message).toBe("JSON nesting is deeper than 32 levels");
    });
  });

  test("a body over server.maxBodyBytes is 413, declared or streamed", async () => {
    await storesNothing(async () => {
      const big = JSON.stringify({ message: message("x".repeat(5000)) });
      const declared = await rest(h.gateway.url, "POST", "/message:send", big, { key });
      expectStatus(declared, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE");
      expect(errorInfo(declared).metadata).toEqual({ limitBytes: "4096" });
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 5; i++) controller.enqueue(new TextEncoder().encode("x".repeat(1000)));
          controller.close();
        },
      });
      const response = await fetch(`${h.gateway.url}/a2a/echo/message:send`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}`, "A2A-Version": "1.0" },
        body: chunks,
      });
      expect(response.status).toBe(413);
      const body = (await response.json()) as { error: { details: { reason: string }[] } };
      expect(body.error.details[0]?.reason).toBe("PAYLOAD_TOO_LARGE");
    });
  });
});

describe("fields", () => {
  test("params that fail their schema are 400 INVALID_PARAMS with a BadRequest naming each field", async () => {
    await storesNothing(async () => {
      const cases: [string, string, unknown, string][] = [
        ["POST", "/message:send", {}, "message"],
        ["POST", "/message:send", { message: { messageId: "m", role: "ROLE_USER", parts: [] } }, "message.parts"],
        [
          "POST",
          "/message:send",
          { message: message("hi"), configuration: { historyLength: -1 } },
          "configuration.historyLength",
        ],
        ["GET", "/tasks?pageSize=0", undefined, "pageSize"],
        ["GET", "/tasks?pageSize=101", undefined, "pageSize"],
        ["GET", "/tasks?pageSize=ten", undefined, "pageSize"],
        ["GET", "/tasks?status=TASK_STATE_RUNNING", undefined, "status"],
        ["GET", "/tasks?includeArtifacts=yes", undefined, "includeArtifacts"],
        ["GET", "/tasks?statusTimestampAfter=yesterday", undefined, "statusTimestampAfter"],
        ["GET", "/tasks?pageSize=1&page_size=2", undefined, "pageSize"],
        ["GET", `/tasks/${"x".repeat(300)}`, undefined, "id"],
        ["GET", "/tasks/t-1?historyLength=-2", undefined, "historyLength"],
      ];
      for (const [method, path, body, field] of cases) {
        const answer = await rest(h.gateway.url, method, path, body, { key });
        expectStatus(answer, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
        expect(fieldViolations(answer).map((violation) => violation.field)).toContain(field);
      }
    });
  });

  test("message checks: an agent role is INVALID_PARAMS; a part's media type the profile does not take is 400", async () => {
    await storesNothing(async () => {
      const agent = await rest(
        h.gateway.url,
        "POST",
        "/message:send",
        { message: message("hi", { role: "ROLE_AGENT" }) },
        { key },
      );
      expectStatus(agent, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
      const image = { message: message("x", { parts: [{ raw: "AAAA", mediaType: "image/png" }] }) };
      const media = await rest(h.gateway.url, "POST", "/message:send", image, { key });
      expectStatus(media, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
      expect(errorInfo(media).metadata).toEqual({ mediaType: "image/png" });
    });
  });

  test("a messageId reused with other content is 400 MESSAGE_ID_REUSED", async () => {
    const first = message("original");
    const sent = await rest(
      h.gateway.url,
      "POST",
      "/message:send",
      { message: first, configuration: { returnImmediately: true } },
      { key },
    );
    expect(sent.status).toBe(200);
    const reused = await rest(
      h.gateway.url,
      "POST",
      "/message:send",
      { message: { ...first, parts: [{ text: "changed" }] }, configuration: { returnImmediately: true } },
      { key },
    );
    expectStatus(reused, 400, "INVALID_ARGUMENT", "MESSAGE_ID_REUSED");
  });
});

describe("tasks", () => {
  test("a missing task is 404 TASK_NOT_FOUND naming it, on every route that names a task", async () => {
    await storesNothing(async () => {
      const id = "01NOSUCHTASK0000000000000";
      const routes: [string, string, unknown][] = [
        ["GET", `/tasks/${id}`, undefined],
        ["POST", `/tasks/${id}:cancel`, undefined],
        ["GET", `/tasks/${id}:subscribe`, undefined],
        ["POST", `/tasks/${id}:subscribe`, undefined],
        ["POST", "/message:send", { message: message("follow-up", { taskId: id }) }],
        ["POST", "/message:stream", { message: message("follow-up", { taskId: id }) }],
        ["POST", `/tasks/${id}/pushNotificationConfigs`, { url: "https://hooks.example.com/x" }],
        ["GET", `/tasks/${id}/pushNotificationConfigs`, undefined],
        ["GET", `/tasks/${id}/pushNotificationConfigs/c-1`, undefined],
      ];
      for (const [method, path, body] of routes) {
        const answer = await rest(h.gateway.url, method, path, body, { key });
        expectStatus(answer, 404, "NOT_FOUND", "TASK_NOT_FOUND");
        expect(errorInfo(answer).metadata).toEqual({ taskId: id });
      }
    });
  });

  test("a completed task: cancel is 400 TASK_NOT_CANCELABLE; a message to it and a subscription are 400 UNSUPPORTED_OPERATION", async () => {
    const id = await task("finish first");
    await h.actor.complete(await h.actor.takeOne({ taskId: id }));
    await storesNothing(async () => {
      const cancel = await rest(h.gateway.url, "POST", `/tasks/${id}:cancel`, undefined, { key });
      expectStatus(cancel, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
      const more = await rest(
        h.gateway.url,
        "POST",
        "/message:send",
        { message: message("more", { taskId: id }) },
        { key },
      );
      expectStatus(more, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
      // A streaming route's failure before its first event is a plain answer, not a stream; asked for with
      // Accept: text/event-stream, it is labelled application/json, which every SDK client reads.
      const subscribe = await openRestStream(h.gateway.url, "GET", `/tasks/${id}:subscribe`, undefined, { key });
      expect(subscribe.status).toBe(400);
      expect(subscribe.contentType).toBe("application/json");
      expect(subscribe.events).toEqual([]);
      expect(subscribe.json.error.details[0]).toMatchObject({
        reason: "UNSUPPORTED_OPERATION",
        metadata: { taskId: id },
      });
    });
  });

  test("a profile without streaming and push notifications: 400 UNSUPPORTED_OPERATION and PUSH_NOTIFICATION_NOT_SUPPORTED", async () => {
    const id = await task("quiet one", "quiet");
    await storesNothing(async () => {
      const options = { key, profile: "quiet" };
      const stream = await rest(h.gateway.url, "POST", "/message:stream", { message: message("x") }, options);
      expectStatus(stream, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
      const subscribe = await rest(h.gateway.url, "POST", `/tasks/${id}:subscribe`, undefined, options);
      expectStatus(subscribe, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
      for (const [method, path, body] of [
        ["POST", `/tasks/${id}/pushNotificationConfigs`, { url: "https://hooks.example.com/x" }],
        ["GET", `/tasks/${id}/pushNotificationConfigs`, undefined],
        ["GET", `/tasks/${id}/pushNotificationConfigs/c`, undefined],
        ["DELETE", `/tasks/${id}/pushNotificationConfigs/c`, undefined],
      ] as const) {
        const answer = await rest(h.gateway.url, method, path, body, options);
        expectStatus(answer, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED");
      }
    });
  });

  test("a webhook URL the address policy refuses is 400 INVALID_PUSH_NOTIFICATION_CONFIG naming the field", async () => {
    const id = await task("hook");
    await storesNothing(async () => {
      const answer = await rest(
        h.gateway.url,
        "POST",
        `/tasks/${id}/pushNotificationConfigs`,
        { url: "http://127.0.0.1/hook" },
        {
          key,
        },
      );
      expectStatus(answer, 400, "INVALID_ARGUMENT", "INVALID_PUSH_NOTIFICATION_CONFIG");
      expect(fieldViolations(answer)[0]?.field).toBe("url");
    });
  });
});

test("after all of it the client's own tasks are intact and the gateway answers", async () => {
  let listed = 0;
  for (const profileName of ["echo", "quiet"]) {
    const answer = await rest(h.gateway.url, "GET", "/tasks", undefined, { key, profile: profileName });
    expect(answer.status).toBe(200);
    listed += answer.body.totalSize;
  }
  expect(listed).toBeGreaterThan(0);
  const indexed = await Promise.all(
    ["echo", "quiet"].map((name) => h.redis.zcard(h.keys.clientTasks(0, clientId, name))),
  );
  expect(indexed.reduce((sum, n) => sum + n, 0)).toBe(listed);
});
