// The HTTP+JSON framing of errors: a google.rpc.Status body whose code is the error table's HTTP status, with the
// table's gRPC status name, details and headers; the media type a client accepts; SSE frames of bare StreamResponses.
import { describe, expect, test } from "bun:test";
import { restErrorResponse, restResultResponse } from "../../../src/gateway/bindings/rest-frames.ts";
import { answerMediaType, REST_FRAMING, restErrorBody } from "../../../src/gateway/index.ts";
import {
  BlockingDeadlineExceededError,
  CapacityError,
  ContentTypeNotSupportedError,
  describeError,
  EndpointNotFoundError,
  ExtendedAgentCardNotConfiguredError,
  HttpMethodNotAllowedError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  MessageIdReusedError,
  MethodNotFoundError,
  ParseError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  RateLimitedError,
  REFUSAL_REASONS,
  RequestMediaTypeError,
  StoreTimeoutError,
  StoreUnavailableError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  WorkerUnavailableError,
} from "../../../src/protocol/index.ts";

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";

describe("HTTP status and gRPC status name of every error (A2A §5.4 where it has a row)", () => {
  const rows: [Error, number, string][] = [
    [new ParseError(), 400, "INVALID_ARGUMENT"],
    [new InvalidRequestError("not an object"), 400, "INVALID_ARGUMENT"],
    [new PayloadTooLargeError(1024), 413, "RESOURCE_EXHAUSTED"],
    [new EndpointNotFoundError("/x"), 404, "UNIMPLEMENTED"],
    [new MethodNotFoundError("x"), 404, "UNIMPLEMENTED"],
    [new HttpMethodNotAllowedError("PUT", "/a2a/echo/tasks", ["GET"]), 405, "UNIMPLEMENTED"],
    [
      new InvalidParamsError("Invalid params", [{ field: "id", description: "Required property" }]),
      400,
      "INVALID_ARGUMENT",
    ],
    [new MessageIdReusedError("m-1"), 400, "INVALID_ARGUMENT"],
    [new TaskNotFoundError("t-1"), 404, "NOT_FOUND"],
    [new TaskNotCancelableError("t-1", "TASK_STATE_COMPLETED"), 400, "FAILED_PRECONDITION"],
    [new PushNotificationNotSupportedError(), 400, "FAILED_PRECONDITION"],
    [new UnsupportedOperationError("no streaming"), 400, "FAILED_PRECONDITION"],
    [new ContentTypeNotSupportedError("image/png"), 400, "INVALID_ARGUMENT"],
    [new RequestMediaTypeError("text/plain"), 415, "INVALID_ARGUMENT"],
    [new ExtendedAgentCardNotConfiguredError(), 400, "FAILED_PRECONDITION"],
    [new VersionNotSupportedError("0.3", ["1.0"]), 400, "FAILED_PRECONDITION"],
    [new UnauthenticatedError(), 401, "UNAUTHENTICATED"],
    [new PermissionDeniedError("echo"), 403, "PERMISSION_DENIED"],
    [new RateLimitedError(2, 1), 429, "RESOURCE_EXHAUSTED"],
    [new WorkerUnavailableError(5), 503, "UNAVAILABLE"],
    [new CapacityError(REFUSAL_REASONS.waitingRequests, "full", 2), 503, "UNAVAILABLE"],
    [new StoreUnavailableError(new Error("ECONNREFUSED")), 503, "UNAVAILABLE"],
    [new StoreTimeoutError(5), 503, "UNAVAILABLE"],
    [new BlockingDeadlineExceededError("t-1", 20), 504, "DEADLINE_EXCEEDED"],
  ];
  for (const [error, status, grpc] of rows) {
    test(`${error.name} → HTTP ${status} ${grpc}, with its message and an ErrorInfo first`, () => {
      const body = restErrorBody(describeError(error));
      expect(body.error.code).toBe(status);
      expect(body.error.status).toBe(grpc as never);
      expect(body.error.message).toBe(error.message);
      expect(body.error.details?.[0]).toMatchObject({ "@type": ERROR_INFO });
      expect(body.error.details?.[0]?.reason).toBe((error as TaskNotFoundError).reason);
    });
  }
});

test("the answer carries the status, the table's headers and the negotiated media type", async () => {
  const refusal = restErrorResponse(describeError(new WorkerUnavailableError(3)), "application/a2a+json");
  expect(refusal.status).toBe(503);
  expect(refusal.headers.get("retry-after")).toBe("3");
  expect(refusal.headers.get("content-type")).toBe("application/a2a+json");
  const body = (await refusal.json()) as { error: { details: unknown[] } };
  expect(body.error.details).toContainEqual({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" });

  const challenge = restErrorResponse(describeError(new UnauthenticatedError()), "application/json");
  expect(challenge.headers.get("www-authenticate")).toBe('Bearer realm="a2a-runtime"');
  expect(challenge.headers.get("content-type")).toBe("application/json");
  const notAllowed = restErrorResponse(
    describeError(new HttpMethodNotAllowedError("PUT", "/a2a/echo/tasks/t", ["GET", "POST"])),
    "application/a2a+json",
  );
  expect(notAllowed.headers.get("allow")).toBe("GET, POST");
});

test("an unexpected error is a 500 INTERNAL with a generic message and no details", () => {
  for (const error of [new Error("password=hunter2 at db.internal"), new InternalError(new Error("boom")), "text"]) {
    expect(restErrorBody(describeError(error))).toEqual({
      error: { code: 500, status: "INTERNAL", message: "Internal error" },
    });
  }
});

test("answers are application/a2a+json when Accept names it, a wildcard or nothing; else application/json", () => {
  const with_ = (accept?: string) =>
    answerMediaType(new Request("http://x/", accept === undefined ? {} : { headers: { Accept: accept } }));
  expect(with_()).toBe("application/a2a+json");
  expect(with_("*/*")).toBe("application/a2a+json");
  expect(with_("application/*;q=0.5")).toBe("application/a2a+json");
  expect(with_("application/a2a+json, application/json")).toBe("application/a2a+json");
  expect(with_("application/json")).toBe("application/json");
  expect(with_("application/json, */*;q=0.1")).toBe("application/json");
  // A streaming call's Accept: its error before the stream must be readable by clients that take only JSON.
  expect(with_("text/event-stream")).toBe("application/json");
});

test("a result is the bare message; Delete's empty result is {}", async () => {
  expect(await restResultResponse({ id: "t" }, "application/a2a+json").json()).toEqual({ id: "t" });
  expect(await restResultResponse(null, "application/a2a+json").text()).toBe("{}");
});

test("SSE frames: a bare StreamResponse per data line; a failure is an error event with the Status body", () => {
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const event = { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" as const } } };
  expect(decode(REST_FRAMING.event(event))).toBe(`data: ${JSON.stringify(event)}\n\n`);
  const failure = decode(REST_FRAMING.error(describeError(new TaskNotFoundError("t"))));
  expect(failure.startsWith("event: error\ndata: ")).toBe(true);
  expect(JSON.parse(failure.slice("event: error\ndata: ".length))).toEqual({
    error: {
      code: 404,
      status: "NOT_FOUND",
      message: "Task not found",
      details: [
        { "@type": ERROR_INFO, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t" } },
      ],
    },
  });
});
