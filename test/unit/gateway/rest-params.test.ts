// The fields of an HTTP+JSON request before its schema check: query parameters by JSON or proto name, typed by the
// method's schema, unknown ones ignored, repeated ones refused; the body's Content-Type; the path over the body.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../../src/config/index.ts";
import { checkBodyMediaType, jsonName, queryFields, requestFields } from "../../../src/gateway/bindings/rest-params.ts";
import {
  checkParams,
  InvalidParamsError,
  InvalidRequestError,
  RequestMediaTypeError,
} from "../../../src/protocol/index.ts";

const server = loadConfig({ env: {} }).server;

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

test("proto names become JSON names; JSON names stay", () => {
  expect(jsonName("context_id")).toBe("contextId");
  expect(jsonName("status_timestamp_after")).toBe("statusTimestampAfter");
  expect(jsonName("pageSize")).toBe("pageSize");
});

describe("queryFields", () => {
  test("ListTasks filters typed by the schema, in either spelling; the result passes the method's check", () => {
    const query = new URLSearchParams(
      "contextId=c-1&status=TASK_STATE_WORKING&page_size=20&pageToken=abc&history_length=0" +
        "&statusTimestampAfter=2026-01-05T10:00:00.000Z&include_artifacts=true",
    );
    const fields = queryFields("ListTasks", query);
    expect(fields).toEqual({
      contextId: "c-1",
      status: "TASK_STATE_WORKING",
      pageSize: 20,
      pageToken: "abc",
      historyLength: 0,
      statusTimestampAfter: "2026-01-05T10:00:00.000Z",
      includeArtifacts: true,
    });
    expect(checkParams("ListTasks", fields).ok).toBe(true);
  });

  test("a value that does not parse stays a string, so the schema names the field", () => {
    const fields = queryFields("ListTasks", new URLSearchParams("pageSize=ten&includeArtifacts=yes&historyLength=1.5"));
    expect(fields).toEqual({ pageSize: "ten", includeArtifacts: "yes", historyLength: "1.5" });
    const checked = checkParams("ListTasks", fields);
    expect(checked.ok ? [] : checked.violations.map((v) => v.field).sort()).toEqual([
      "historyLength",
      "includeArtifacts",
      "pageSize",
    ]);
  });

  test("parameters that name no field (A2A-Version, a path field's name on another method) are ignored", () => {
    expect(queryFields("GetTask", new URLSearchParams("A2A-Version=1.0&historyLength=2&foo=bar"))).toEqual({
      historyLength: 2,
    });
    expect(queryFields("ListTasks", new URLSearchParams("lastUpdatedAfter=2026-01-05T10:00:00Z"))).toEqual({});
  });

  test("a field given twice, in one spelling or both, is refused with a field violation", () => {
    for (const query of ["pageSize=1&pageSize=2", "pageSize=1&page_size=1"]) {
      const error = thrown(() => queryFields("ListTasks", new URLSearchParams(query)));
      expect(error).toBeInstanceOf(InvalidParamsError);
      expect((error as InvalidParamsError).violations).toEqual([
        { field: "pageSize", description: "given more than once in the query string" },
      ]);
    }
  });

  test("an object field cannot come from the query string", () => {
    const error = thrown(() => queryFields("CancelTask", new URLSearchParams("metadata=x")));
    expect(error).toBeInstanceOf(InvalidParamsError);
    expect((error as InvalidParamsError).violations[0]?.field).toBe("metadata");
  });
});

test("a body is JSON by its Content-Type (either media type, any parameters) or has none; anything else is 415", () => {
  const request = (type?: string) =>
    new Request("http://x/", {
      method: "POST",
      body: "{}",
      headers: type === undefined ? {} : { "Content-Type": type },
    });
  for (const ok of ["application/a2a+json", "application/json", "Application/JSON; charset=utf-8", undefined]) {
    expect(() => checkBodyMediaType(request(ok))).not.toThrow();
  }
  for (const refused of ["text/plain", "application/x-www-form-urlencoded", "application/json-seq", ""]) {
    expect(thrown(() => checkBodyMediaType(request(refused)))).toBeInstanceOf(RequestMediaTypeError);
  }
});

describe("requestFields", () => {
  const post = (body: string) =>
    new Request("http://x/a2a/echo/tasks/t-1:cancel?metadata=ignored", {
      method: "POST",
      body,
      headers: { "Content-Type": "application/json" },
    });
  const cancel = { method: "CancelTask" as const, fields: "body" as const, pathFields: { id: "t-1" } };

  test("an empty body is the empty message; the path's fields win over the body's; a POST's query is not read", async () => {
    expect(await requestFields(cancel, post(""), server)).toEqual({ id: "t-1" });
    expect(await requestFields(cancel, post('{"id":"other","metadata":{"why":"done"}}'), server)).toEqual({
      id: "t-1",
      metadata: { why: "done" },
    });
  });

  test("a body that is JSON but not an object is INVALID_REQUEST", async () => {
    for (const body of ["[]", '"x"', "3", "null"]) {
      expect(await requestFields(cancel, post(body), server).catch((e: unknown) => e)).toBeInstanceOf(
        InvalidRequestError,
      );
    }
  });

  test("a GET's fields come from its query, with the path's over them", async () => {
    const route = { method: "GetTask" as const, fields: "query" as const, pathFields: { id: "t-1" } };
    const request = new Request("http://x/a2a/echo/tasks/t-1?id=other&historyLength=3");
    expect(await requestFields(route, request, server)).toEqual({ id: "t-1", historyLength: 3 });
  });
});
