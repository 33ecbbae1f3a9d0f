// errorAnswer is the one table from errors to JSON-RPC codes, HTTP statuses, headers and google.rpc details.
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { errorAnswer, errorResponse } from "../../../src/gateway/index.ts";
import {
  BlockingDeadlineExceededError,
  CapacityError,
  ContentTypeNotSupportedError,
  EndpointNotFoundError,
  ExtendedAgentCardNotConfiguredError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  JsonRpcErrorResponseSchema,
  MessageIdReusedError,
  MethodNotFoundError,
  ParseError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  REFUSAL_REASONS,
  StoreUnavailableError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  WorkerUnavailableError,
} from "../../../src/protocol/index.ts";

const errorResponseShape = TypeCompiler.Compile(JsonRpcErrorResponseSchema);
const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";

describe("codes and HTTP statuses", () => {
  const A2A = "a2a-protocol.org";
  const OWN = "a2a-runtime";
  // A2A's own error types carry A2A's domain; this runtime's reasons (refusals, auth, limits) carry its own.
  const rows: [Error, number, number, string][] = [
    [new ParseError(), -32700, 200, A2A],
    [new InvalidRequestError("Invalid Request"), -32600, 200, A2A],
    [new PayloadTooLargeError(1024), -32600, 413, OWN],
    [new EndpointNotFoundError("/x"), -32600, 404, OWN],
    [new MethodNotFoundError("message/send"), -32601, 200, A2A],
    [new InvalidParamsError("Invalid params", [{ field: "id", description: "Required property" }]), -32602, 200, A2A],
    [new MessageIdReusedError("m-1"), -32602, 200, OWN],
    [new TaskNotFoundError("t-1"), -32001, 200, A2A],
    [new TaskNotCancelableError("t-1", "TASK_STATE_COMPLETED"), -32002, 200, A2A],
    [new PushNotificationNotSupportedError(), -32003, 200, A2A],
    [new UnsupportedOperationError("no streaming"), -32004, 200, A2A],
    [new ContentTypeNotSupportedError("image/png"), -32005, 200, A2A],
    [new ExtendedAgentCardNotConfiguredError(), -32007, 200, A2A],
    [new VersionNotSupportedError("0.3", ["1.0"]), -32009, 200, A2A],
    [new UnauthenticatedError(), -32000, 401, OWN],
    [new PermissionDeniedError("echo"), -32000, 403, OWN],
    [new WorkerUnavailableError(5), -32000, 503, OWN],
    [new CapacityError(REFUSAL_REASONS.waitingRequests, "full", 2), -32000, 503, OWN],
    [new StoreUnavailableError(new Error("ECONNREFUSED")), -32000, 503, OWN],
    [new BlockingDeadlineExceededError("t-1", 20), -32603, 504, OWN],
  ];

  for (const [error, code, status, domain] of rows) {
    test(`${error.name} → ${code}, HTTP ${status}, with an ErrorInfo of domain ${domain}`, () => {
      const answer = errorAnswer(error, 7);
      expect(answer.status).toBe(status);
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.id).toBe(7);
      expect(answer.unexpected).toBe(false);
      expect(errorResponseShape.Check(answer.body)).toBe(true);
      const data = answer.body.error.data ?? [];
      expect(data[0]).toMatchObject({ "@type": ERROR_INFO, domain });
      for (const detail of data) expect(detail["@type"]).toStartWith("type.googleapis.com/google.rpc.");
    });
  }
});

test("a refusal has Retry-After and a RetryInfo with the same delay", () => {
  const answer = errorAnswer(new CapacityError("CLIENT_TASK_LIMIT_EXCEEDED", "at limit", 7, { clientId: "c" }), 1);
  expect(answer.headers).toEqual({ "Retry-After": "7" });
  expect(answer.body.error.data as unknown).toEqual([
    {
      "@type": ERROR_INFO,
      reason: "CLIENT_TASK_LIMIT_EXCEEDED",
      domain: "a2a-runtime",
      metadata: { clientId: "c" },
    },
    { "@type": RETRY_INFO, retryDelay: "7s" },
  ]);
});

test("WORKER_UNAVAILABLE names its reason; ErrorInfo omits empty metadata", () => {
  const answer = errorAnswer(new WorkerUnavailableError(5), "r");
  expect(answer.body.error.data?.[0] as unknown).toEqual({
    "@type": ERROR_INFO,
    reason: "WORKER_UNAVAILABLE",
    domain: "a2a-runtime",
  });
});

test("401 carries a WWW-Authenticate challenge", () => {
  expect(errorAnswer(new UnauthenticatedError(), null).headers).toEqual({
    "WWW-Authenticate": 'Bearer realm="a2a-runtime"',
  });
});

test("-32602 carries a BadRequest with every field violation", () => {
  const violations = [
    { field: "message.parts", description: "Expected array" },
    { field: "configuration.historyLength", description: "Expected integer" },
  ];
  const answer = errorAnswer(new InvalidParamsError("Invalid params: message.parts: Expected array", violations), 1);
  expect(answer.body.error.data?.[1] as unknown).toEqual({ "@type": BAD_REQUEST, fieldViolations: violations });
});

test("the blocking deadline names the task, so the client can fetch it", () => {
  const answer = errorAnswer(new BlockingDeadlineExceededError("t-42", 20), 1);
  expect(answer.body.error.data as unknown).toEqual([
    {
      "@type": ERROR_INFO,
      reason: "BLOCKING_DEADLINE_EXCEEDED",
      domain: "a2a-runtime",
      metadata: { taskId: "t-42", blockingWaitSeconds: "20" },
    },
  ]);
});

test("an unexpected error is a generic -32603: no message, no details, flagged for the log", () => {
  for (const error of [
    new Error("password=hunter2 at db.internal"),
    new InternalError(new Error("boom")),
    "a string",
  ]) {
    const answer = errorAnswer(error, 3);
    expect(answer.status).toBe(200);
    expect(answer.unexpected).toBe(true);
    expect(answer.body).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "Internal error" } });
  }
});

test("errorResponse is JSON with the status and headers of the answer", async () => {
  const response = errorResponse(errorAnswer(new WorkerUnavailableError(3), 1));
  expect(response.status).toBe(503);
  expect(response.headers.get("content-type")).toBe("application/json");
  expect(response.headers.get("retry-after")).toBe("3");
  expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32000);
});
