// Params are read as ProtoJSON before they are checked: proto field names and JSON names, enum numbers and names,
// int32 as decimal strings; fields the proto does not define are dropped; an enum's zero value reads as unset.
import { describe, expect, test } from "bun:test";
import { type A2aMethod, checkParams, protoName } from "../../../src/protocol/index.ts";

function accepted(method: A2aMethod, params: unknown): unknown {
  const result = checkParams(method, params);
  if (!result.ok) throw new Error(`${method} refused: ${JSON.stringify(result.violations)}`);
  return result.value;
}

describe("ProtoJSON params", () => {
  test("proto names are JSON names in snake_case", () => {
    expect(protoName("referenceTaskIds")).toBe("reference_task_ids");
    expect(protoName("taskPushNotificationConfig")).toBe("task_push_notification_config");
    expect(protoName("id")).toBe("id");
  });

  test("a SendMessage in proto names, enum numbers and unknown fields reads as the JSON-named proto fields alone", () => {
    const params = {
      message: {
        message_id: "m-1",
        role: 1,
        kind: "message",
        context_id: "c-1",
        reference_task_ids: ["t-0"],
        parts: [
          { kind: "text", text: "hi", media_type: "text/plain", extra: 1 },
          { data: { keep_me: { nested_snake: true } }, metadata: { snake_key: "kept as sent" } },
        ],
      },
      configuration: { return_immediately: true, history_length: "5", accepted_output_modes: ["text/plain"] },
      tenant: "",
      unknownTopLevel: { a: 1 },
    };
    expect(accepted("SendMessage", params)).toEqual({
      message: {
        messageId: "m-1",
        role: "ROLE_USER",
        contextId: "c-1",
        referenceTaskIds: ["t-0"],
        parts: [
          { text: "hi", mediaType: "text/plain" },
          { data: { keep_me: { nested_snake: true } }, metadata: { snake_key: "kept as sent" } },
        ],
      },
      configuration: { returnImmediately: true, historyLength: 5, acceptedOutputModes: ["text/plain"] },
      tenant: "",
    });
  });

  test("the JSON name wins over the proto name when both are sent", () => {
    expect(accepted("GetTask", { id: "json", history_length: 1, historyLength: 2 })).toEqual({
      id: "json",
      historyLength: 2,
    });
  });

  test("ListTasks: status by number or name; TASK_STATE_UNSPECIFIED and 0 mean no filter", () => {
    expect(accepted("ListTasks", { status: 3 })).toEqual({ status: "TASK_STATE_COMPLETED" });
    expect(accepted("ListTasks", { status: 8 })).toEqual({ status: "TASK_STATE_AUTH_REQUIRED" });
    expect(accepted("ListTasks", { status: "TASK_STATE_WORKING" })).toEqual({ status: "TASK_STATE_WORKING" });
    expect(accepted("ListTasks", { status: 0, page_size: "10" })).toEqual({ pageSize: 10 });
    expect(accepted("ListTasks", { status: "TASK_STATE_UNSPECIFIED", include_artifacts: true })).toEqual({
      includeArtifacts: true,
    });
    for (const status of [9, -1, 2.5, "2"]) expect(checkParams("ListTasks", { status }).ok).toBe(false);
  });

  test("a role of 0 or ROLE_UNSPECIFIED is a missing role; ROLE_AGENT by number reads as its name", () => {
    const message = (role: unknown) => ({ message: { messageId: "m", role, parts: [{ text: "x" }] } });
    for (const role of [0, "ROLE_UNSPECIFIED"]) {
      const result = checkParams("SendMessage", message(role));
      expect(result.ok ? [] : result.violations).toEqual([{ field: "message.role", description: "Required property" }]);
    }
    expect(accepted("SendMessage", message(2))).toMatchObject({ message: { role: "ROLE_AGENT" } });
  });

  test("push config params in proto names; metadata and Struct keys are never renamed", () => {
    expect(
      accepted("CreateTaskPushNotificationConfig", {
        task_id: "t-1",
        url: "https://hooks.example.com",
        authentication: { scheme: "Bearer", credentials: "c", extra: true },
        push_notification_config: { ignored: true },
      }),
    ).toEqual({
      taskId: "t-1",
      url: "https://hooks.example.com",
      authentication: { scheme: "Bearer", credentials: "c" },
    });
    expect(accepted("CancelTask", { id: "t", metadata: { task_id: "x", nested: { snake_case: 1 } } })).toEqual({
      id: "t",
      metadata: { task_id: "x", nested: { snake_case: 1 } },
    });
  });

  test("values that are not what the proto says are still refused, by their JSON name", () => {
    const result = checkParams("GetTask", { id: "t", history_length: "many" });
    expect(result.ok ? [] : result.violations.map((violation) => violation.field)).toEqual(["historyLength"]);
    expect(checkParams("GetTask", { id: "t", historyLength: "99999999999" }).ok).toBe(false);
  });
});
