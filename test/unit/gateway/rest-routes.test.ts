// The HTTP+JSON routes: each A2A method at its proto route, path fields decoded, custom verbs, the optional tenant
// segment, 404 for a path no route has and 405 (with the methods that are served) for another HTTP method.
import { describe, expect, test } from "bun:test";
import { matchRoute } from "../../../src/gateway/index.ts";
import { EndpointNotFoundError, HttpMethodNotAllowedError, InvalidRequestError } from "../../../src/protocol/index.ts";

/** The route of `method path`, `path` as written below the profile's endpoint. */
function route(method: string, path: string) {
  return matchRoute(method, path.slice(1).split("/"), `/a2a/echo${path}`);
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("every method at its route", () => {
  const rows: [string, string, string, string, Record<string, string>][] = [
    ["POST", "/message:send", "SendMessage", "body", {}],
    ["POST", "/message:stream", "SendStreamingMessage", "body", {}],
    ["GET", "/tasks", "ListTasks", "query", {}],
    ["GET", "/tasks/t-1", "GetTask", "query", { id: "t-1" }],
    ["POST", "/tasks/t-1:cancel", "CancelTask", "body", { id: "t-1" }],
    ["GET", "/tasks/t-1:subscribe", "SubscribeToTask", "query", { id: "t-1" }],
    ["POST", "/tasks/t-1:subscribe", "SubscribeToTask", "body", { id: "t-1" }],
    ["POST", "/tasks/t-1/pushNotificationConfigs", "CreateTaskPushNotificationConfig", "body", { taskId: "t-1" }],
    ["GET", "/tasks/t-1/pushNotificationConfigs", "ListTaskPushNotificationConfigs", "query", { taskId: "t-1" }],
    [
      "GET",
      "/tasks/t-1/pushNotificationConfigs/c-1",
      "GetTaskPushNotificationConfig",
      "query",
      { taskId: "t-1", id: "c-1" },
    ],
    [
      "DELETE",
      "/tasks/t-1/pushNotificationConfigs/c-1",
      "DeleteTaskPushNotificationConfig",
      "query",
      { taskId: "t-1", id: "c-1" },
    ],
    ["GET", "/extendedAgentCard", "GetExtendedAgentCard", "query", {}],
  ];
  for (const [http, path, method, fields, pathFields] of rows) {
    test(`${http} ${path} → ${method}`, () => {
      expect(route(http, path)).toEqual({ method: method as never, fields: fields as never, pathFields });
    });
  }
});

test("path fields are percent-decoded; a colon in an id is the id's when it is not a known verb", () => {
  expect(route("GET", "/tasks/a%2Fb%3Ac").pathFields).toEqual({ id: "a/b:c" });
  expect(route("POST", "/tasks/a%3Acancel:cancel")).toMatchObject({
    method: "CancelTask",
    pathFields: { id: "a:cancel" },
  });
  expect(route("GET", "/tasks/a:b")).toMatchObject({ method: "GetTask", pathFields: { id: "a:b" } });
  expect(route("GET", "/tasks/t/pushNotificationConfigs/hook:1").pathFields).toEqual({ taskId: "t", id: "hook:1" });
  expect(thrown(() => route("GET", "/tasks/%E0%A4%A"))).toBeInstanceOf(InvalidRequestError);
});

test("a first segment that fits no route is the tenant (the proto's /{tenant}/… bindings)", () => {
  expect(route("POST", "/acme/message:send")).toEqual({
    method: "SendMessage",
    fields: "body",
    pathFields: { tenant: "acme" },
  });
  expect(route("GET", "/acme%20corp/tasks/t-1").pathFields).toEqual({ tenant: "acme corp", id: "t-1" });
  // A path that fits a route without a tenant is that route: "tasks" is not read as a tenant here.
  expect(route("GET", "/tasks/tasks")).toMatchObject({ method: "GetTask", pathFields: { id: "tasks" } });
});

test("a path no route has is EndpointNotFoundError naming the path", () => {
  for (const path of ["/", "/nothing", "/tasks/", "/tasks/t-1/x", "/message:send/x", "//tasks", "/a/b/message:send"]) {
    const error = thrown(() => route("GET", path));
    expect(error).toBeInstanceOf(EndpointNotFoundError);
    expect((error as EndpointNotFoundError).metadata).toEqual({ path: `/a2a/echo${path}` });
  }
});

test("another HTTP method at a route's path is HttpMethodNotAllowedError listing the served ones", () => {
  const cases: [string, string, string[]][] = [
    ["GET", "/message:send", ["POST"]],
    ["PUT", "/tasks/t-1", ["GET"]],
    ["GET", "/tasks/t-1:cancel", ["POST"]],
    ["DELETE", "/tasks/t-1:subscribe", ["GET", "POST"]],
    ["PATCH", "/tasks/t-1/pushNotificationConfigs", ["POST", "GET"]],
    ["POST", "/tasks/t-1/pushNotificationConfigs/c", ["GET", "DELETE"]],
    ["HEAD", "/tasks", ["GET"]],
  ];
  for (const [http, path, allowed] of cases) {
    const error = thrown(() => route(http, path));
    expect(error).toBeInstanceOf(HttpMethodNotAllowedError);
    expect((error as HttpMethodNotAllowedError).allowed).toEqual(allowed);
  }
});
