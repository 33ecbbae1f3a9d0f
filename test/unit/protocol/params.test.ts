// checkParams/checkJsonRpcRequest accept the digest examples and name each bad field with a readable message.

import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  A2A_METHODS,
  type A2aMethod,
  checkJsonRpcRequest,
  checkParams,
  isA2aMethod,
  JsonRpcResponseSchema,
  ListTasksResponseSchema,
  MAX_VIOLATIONS,
  SendMessageResponseSchema,
  type Violation,
} from "../../../src/protocol/index.ts";

// Digest §1.3, the SendMessage round trip.
const DIGEST_SEND_REQUEST = {
  jsonrpc: "2.0",
  id: 1,
  method: "SendMessage",
  params: {
    message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Book a flight" }] },
    configuration: { returnImmediately: false, historyLength: 0 },
  },
};
const DIGEST_SEND_RESPONSE = {
  jsonrpc: "2.0",
  id: 1,
  result: {
    task: {
      id: "t-1",
      contextId: "c-1",
      status: {
        state: "TASK_STATE_INPUT_REQUIRED",
        timestamp: "2026-01-05T10:00:00.000Z",
        message: {
          messageId: "m-2",
          role: "ROLE_AGENT",
          contextId: "c-1",
          taskId: "t-1",
          parts: [{ text: "From where to where?" }],
        },
      },
    },
  },
};

const USER_MESSAGE = DIGEST_SEND_REQUEST.params.message;

/** The violations of a call that must fail. */
function violationsOf(method: A2aMethod, params: unknown): Violation[] {
  const result = checkParams(method, params);
  if (result.ok) throw new Error(`expected ${method} params to be rejected`);
  return result.violations;
}

function fieldsOf(method: A2aMethod, params: unknown): string[] {
  return violationsOf(method, params).map((violation) => violation.field);
}

describe("method names", () => {
  test("are the eleven PascalCase 1.0 names", () => {
    expect(A2A_METHODS).toHaveLength(11);
    expect(isA2aMethod("SendMessage")).toBe(true);
    expect(isA2aMethod("ListTaskPushNotificationConfigs")).toBe(true);
    expect(isA2aMethod("message/send")).toBe(false);
    expect(isA2aMethod("tasks/get")).toBe(false);
    expect(isA2aMethod("ListTaskPushNotificationConfig")).toBe(false);
    expect(isA2aMethod(42)).toBe(false);
  });
});

describe("JSON-RPC envelope", () => {
  test("accepts the digest's request and responses", () => {
    expect(checkJsonRpcRequest(DIGEST_SEND_REQUEST).ok).toBe(true);
    const isResponse = TypeCompiler.Compile(JsonRpcResponseSchema);
    expect(isResponse.Check(DIGEST_SEND_RESPONSE)).toBe(true);
    const error = {
      code: -32001,
      message: "Task not found",
      data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo" }],
    };
    expect(isResponse.Check({ jsonrpc: "2.0", id: 2, error })).toBe(true);
    expect(isResponse.Check({ jsonrpc: "2.0", id: 2, error: { ...error, data: { reason: "x" } } })).toBe(false);
    expect(isResponse.Check({ jsonrpc: "2.0", id: 2 })).toBe(false);
  });

  test("reports each bad envelope field", () => {
    const result = checkJsonRpcRequest({ jsonrpc: "1.0", id: {}, method: "", params: [] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.violations).toEqual([
      { field: "jsonrpc", description: 'Expected "2.0"' },
      { field: "id", description: "Expected string, number or null" },
      { field: "method", description: "Expected non-empty string" },
      { field: "params", description: "Expected object" },
    ]);
  });

  test("rejects a batch", () => {
    expect(checkJsonRpcRequest([DIGEST_SEND_REQUEST]).ok).toBe(false);
  });
});

describe("SendMessage params", () => {
  test("accept the digest's round trip", () => {
    const result = checkParams("SendMessage", DIGEST_SEND_REQUEST.params);
    expect<unknown>(result).toEqual({ ok: true, value: DIGEST_SEND_REQUEST.params });
    expect(checkParams("SendStreamingMessage", DIGEST_SEND_REQUEST.params).ok).toBe(true);
    expect(TypeCompiler.Compile(SendMessageResponseSchema).Check(DIGEST_SEND_RESPONSE.result)).toBe(true);
  });

  test("accept an inline push config", () => {
    const configuration = {
      taskPushNotificationConfig: { url: "https://hooks.example.com", authentication: { scheme: "Bearer" } },
    };
    expect(checkParams("SendMessage", { message: USER_MESSAGE, configuration }).ok).toBe(true);
  });

  test("name the 0.3 role and the missing message", () => {
    expect(violationsOf("SendMessage", { message: { ...USER_MESSAGE, role: "user" } })).toEqual([
      { field: "message.role", description: "Expected one of ROLE_USER, ROLE_AGENT" },
    ]);
    expect(violationsOf("SendMessage", {})).toEqual([{ field: "message", description: "Required property" }]);
    expect(violationsOf("SendMessage", undefined)).toEqual([{ field: "message", description: "Required property" }]);
  });

  test("give one clear message per bad part", () => {
    const parts = [{ text: "a", data: { k: 1 } }, { mediaType: "text/plain" }, { text: 5 }, { raw: "not base64!" }];
    expect(violationsOf("SendMessage", { message: { ...USER_MESSAGE, parts } })).toEqual([
      { field: "message.parts[0]", description: "Expected exactly one of text, raw, url, data, found text and data" },
      { field: "message.parts[1]", description: "Expected one of text, raw, url, data" },
      { field: "message.parts[2].text", description: "Expected string" },
      { field: "message.parts[3].raw", description: "Expected a base64 string" },
    ]);
  });

  test("reject an empty parts array and a negative historyLength", () => {
    expect(violationsOf("SendMessage", { message: { ...USER_MESSAGE, parts: [] } })).toEqual([
      { field: "message.parts", description: "Expected at least 1 item" },
    ]);
    expect(fieldsOf("SendMessage", { message: USER_MESSAGE, configuration: { historyLength: -1 } })).toEqual([
      "configuration.historyLength",
    ]);
  });

  test("cap the number of violations", () => {
    const parts = Array.from({ length: 25 }, () => ({ text: 1 }));
    expect(violationsOf("SendMessage", { message: { ...USER_MESSAGE, parts } })).toHaveLength(MAX_VIOLATIONS);
  });
});

describe("ListTasks params", () => {
  test("accept every filter", () => {
    const params = {
      tenant: "acme",
      contextId: "c-1",
      status: "TASK_STATE_WORKING",
      pageSize: 100,
      pageToken: "dC0x",
      historyLength: 0,
      statusTimestampAfter: "2026-01-05T10:00:00.000Z",
      includeArtifacts: true,
    };
    expect(checkParams("ListTasks", params).ok).toBe(true);
    expect(checkParams("ListTasks", {}).ok).toBe(true);
    expect(checkParams("ListTasks", { pageSize: 1 }).ok).toBe(true);
  });

  test("reject page sizes outside 1..100 at pageSize", () => {
    for (const pageSize of [0, 101, 2.5, "1e1", "10.0"])
      expect(fieldsOf("ListTasks", { pageSize })).toEqual(["pageSize"]);
    expect(violationsOf("ListTasks", { pageSize: 0 })[0]?.description).toBe("Expected integer from 1 to 100");
  });

  test("reject an unknown or 0.3 status, a negative historyLength and an offset timestamp", () => {
    expect(violationsOf("ListTasks", { status: "TASK_STATE_RUNNING" })[0]?.field).toBe("status");
    expect(fieldsOf("ListTasks", { status: "completed" })).toEqual(["status"]);
    expect(fieldsOf("ListTasks", { historyLength: -1 })).toEqual(["historyLength"]);
    expect(fieldsOf("ListTasks", { statusTimestampAfter: "2026-01-05T10:00:00+02:00" })).toEqual([
      "statusTimestampAfter",
    ]);
  });

  test("the response keeps all four fields", () => {
    const isResponse = TypeCompiler.Compile(ListTasksResponseSchema);
    expect(isResponse.Check({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 })).toBe(true);
    expect(isResponse.Check({ tasks: [], pageSize: 50, totalSize: 0 })).toBe(false);
  });
});

describe("task and push-config params", () => {
  test("accept well-formed params for every other method", () => {
    expect(checkParams("GetTask", { id: "t-1", historyLength: 3 }).ok).toBe(true);
    expect(checkParams("CancelTask", { id: "t-1", metadata: { reason: "user" } }).ok).toBe(true);
    expect(checkParams("SubscribeToTask", { id: "t-1", tenant: "acme" }).ok).toBe(true);
    expect(
      checkParams("CreateTaskPushNotificationConfig", { taskId: "t-1", url: "https://hooks.example.com" }).ok,
    ).toBe(true);
    expect(checkParams("GetTaskPushNotificationConfig", { taskId: "t-1", id: "p-1" }).ok).toBe(true);
    expect(checkParams("DeleteTaskPushNotificationConfig", { taskId: "t-1", id: "p-1" }).ok).toBe(true);
    expect(checkParams("ListTaskPushNotificationConfigs", { taskId: "t-1", pageSize: 0 }).ok).toBe(true);
    expect(checkParams("GetExtendedAgentCard", undefined)).toEqual({ ok: true, value: {} });
    expect(checkParams("GetExtendedAgentCard", { tenant: "acme" }).ok).toBe(true);
  });

  test("name the missing or empty ids", () => {
    expect(violationsOf("GetTask", {})).toEqual([{ field: "id", description: "Required property" }]);
    expect(violationsOf("GetTask", { id: "" })).toEqual([{ field: "id", description: "Expected non-empty string" }]);
    expect(fieldsOf("GetTask", { id: "t-1", historyLength: -1 })).toEqual(["historyLength"]);
    expect(fieldsOf("CancelTask", { id: 7, metadata: [] })).toEqual(["id", "metadata"]);
    expect(fieldsOf("GetTaskPushNotificationConfig", { id: "t-1", pushNotificationConfigId: "p-1" })).toEqual([
      "taskId",
    ]);
    expect(fieldsOf("DeleteTaskPushNotificationConfig", { taskId: "t-1" })).toEqual(["id"]);
    expect(fieldsOf("ListTaskPushNotificationConfigs", { taskId: "t-1", pageSize: -1 })).toEqual(["pageSize"]);
  });

  test("reject the 0.3 nested push config", () => {
    const legacy = { taskId: "t-1", pushNotificationConfig: { url: "https://hooks.example.com" } };
    expect(violationsOf("CreateTaskPushNotificationConfig", legacy)).toEqual([
      { field: "url", description: "Required property" },
    ]);
    const badAuth = { url: "https://hooks.example.com", authentication: { schemes: ["Bearer"] } };
    expect(fieldsOf("CreateTaskPushNotificationConfig", badAuth)).toEqual(["authentication.scheme"]);
  });

  test("index array elements and ignore unknown fields", () => {
    const params = { message: USER_MESSAGE, configuration: { acceptedOutputModes: ["text/plain", 2] }, extra: true };
    expect(fieldsOf("SendMessage", params)).toEqual(["configuration.acceptedOutputModes[1]"]);
    expect(fieldsOf("SendMessage", { message: USER_MESSAGE, metadata: "x" })).toEqual(["metadata"]);
  });
});
