// The A2A 0.3 dialect's two translations: a 0.3 request read as the 1.0 call (field by field, nothing else kept) and
// 1.0 results and events written as 0.3 objects that match the 0.3 shapes exactly.
import { describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  readV03Request,
  type StreamResponse,
  type Task,
  toV03Event,
  toV03PushConfig,
  toV03Result,
  toV03Task,
  type V03Method,
  V03StreamEventSchema,
  V03TaskPushNotificationConfigSchema,
  V03TaskSchema,
} from "../../../src/protocol/index.ts";

function call(method: V03Method, params: unknown) {
  const read = readV03Request(method, params);
  if (!read.ok) throw new Error(`${method} refused: ${JSON.stringify(read.violations)}`);
  return read.value;
}

function refused(method: V03Method, params: unknown): string[] {
  const read = readV03Request(method, params);
  if (read.ok) throw new Error(`${method} accepted`);
  return read.violations.map((violation) => `${violation.field}: ${violation.description}`);
}

// Checks that reject any property the 0.3 shape does not have.
const strict = <T extends Parameters<typeof TypeCompiler.Compile>[0]>(schema: T) =>
  TypeCompiler.Compile({ ...schema, additionalProperties: false } as T);

describe("0.3 requests read as 1.0 calls", () => {
  test("message/send: kinds dropped, file parts to raw/url, roles to ROLE_*, blocking:false to returnImmediately", () => {
    const read = call("message/send", {
      message: {
        kind: "message",
        messageId: "m-1",
        role: "user",
        contextId: "c-1",
        parts: [
          { kind: "text", text: "hello", metadata: { m: 1 } },
          { kind: "file", file: { bytes: "aGk=", mimeType: "text/plain", name: "hi.txt" } },
          { kind: "file", file: { uri: "https://files.example.com/a.pdf" } },
          { kind: "data", data: { city: "Paris" } },
          { kind: "data", data: { value: [1, 2] }, metadata: { data_part_compat: true } },
        ],
        unknown: "dropped",
      },
      configuration: {
        blocking: false,
        historyLength: 2,
        acceptedOutputModes: ["text/plain"],
        pushNotificationConfig: {
          url: "https://hooks.example.com/a2a",
          token: "tok",
          authentication: { schemes: ["Bearer", "Basic"], credentials: "secret" },
        },
      },
      metadata: { trace: "x" },
    });
    expect(read).toEqual({
      method: "SendMessage",
      params: {
        message: {
          messageId: "m-1",
          role: "ROLE_USER",
          contextId: "c-1",
          parts: [
            { text: "hello", metadata: { m: 1 } },
            { raw: "aGk=", mediaType: "text/plain", filename: "hi.txt" },
            { url: "https://files.example.com/a.pdf" },
            { data: { city: "Paris" } },
            { data: [1, 2] },
          ],
        },
        configuration: {
          returnImmediately: true,
          historyLength: 2,
          acceptedOutputModes: ["text/plain"],
          taskPushNotificationConfig: {
            url: "https://hooks.example.com/a2a",
            token: "tok",
            authentication: { scheme: "Bearer", credentials: "secret" },
          },
        },
        metadata: { trace: "x" },
      },
    });
  });

  test("blocking absent or true waits (no returnImmediately); message/stream reads the same params", () => {
    const message = { messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] };
    for (const configuration of [undefined, {}, { blocking: true }]) {
      const read = call("message/send", { message, configuration });
      expect(read.method === "SendMessage" && read.params.configuration?.returnImmediately).toBeFalsy();
    }
    expect(call("message/stream", { message }).method).toBe("SendStreamingMessage");
  });

  test("task and push-config methods map their ids; get without a config id means the task's default config", () => {
    expect(call("tasks/get", { id: "t", historyLength: 0, metadata: {} })).toEqual({
      method: "GetTask",
      params: { id: "t", historyLength: 0 },
    });
    expect(call("tasks/cancel", { id: "t" })).toEqual({ method: "CancelTask", params: { id: "t" } });
    expect(call("tasks/resubscribe", { id: "t" })).toEqual({ method: "SubscribeToTask", params: { id: "t" } });
    expect(
      call("tasks/pushNotificationConfig/set", {
        taskId: "t",
        pushNotificationConfig: { id: "h", url: "https://h.example" },
      }),
    ).toEqual({
      method: "CreateTaskPushNotificationConfig",
      params: { taskId: "t", id: "h", url: "https://h.example" },
    });
    expect(call("tasks/pushNotificationConfig/get", { id: "t", pushNotificationConfigId: "h" }).params).toEqual({
      taskId: "t",
      id: "h",
    });
    expect(call("tasks/pushNotificationConfig/get", { id: "t" }).params).toEqual({ taskId: "t", id: "t" });
    expect(call("tasks/pushNotificationConfig/list", { id: "t" }).params).toEqual({ taskId: "t" });
    expect(call("tasks/pushNotificationConfig/delete", { id: "t", pushNotificationConfigId: "h" }).params).toEqual({
      taskId: "t",
      id: "h",
    });
    expect(call("agent/getAuthenticatedExtendedCard", undefined)).toEqual({
      method: "GetExtendedAgentCard",
      params: {},
    });
  });

  test("bad 0.3 params are refused naming the 0.3 field", () => {
    const message = (parts: unknown[]) => ({ message: { messageId: "m", role: "user", parts } });
    expect(refused("message/send", message([{ kind: "text" }]))).toEqual([
      "message.parts[0]: Expected one of text, file, data",
    ]);
    expect(refused("message/send", message([{ kind: "data", text: "x" }]))).toEqual([
      'message.parts[0].kind: Expected "text" for a part with text',
    ]);
    expect(refused("message/send", message([{ kind: "file", file: { bytes: "aGk=", uri: "https://x" } }]))).toEqual([
      "message.parts[0].file: Expected exactly one of bytes, uri",
    ]);
    expect(refused("message/send", message([{ kind: "data", data: [1] }]))[0]).toStartWith("message.parts[0].data");
    expect(
      refused("message/send", { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } })[0],
    ).toStartWith("message.role");
    expect(
      refused("message/send", {
        message: { messageId: "m", role: "user", parts: [{ text: "x" }] },
        configuration: { blocking: "no" },
      }),
    ).toEqual(["configuration.blocking: Expected boolean"]);
    expect(refused("tasks/pushNotificationConfig/set", { taskId: "t", url: "https://flat.example" })[0]).toStartWith(
      "pushNotificationConfig",
    );
    expect(refused("tasks/pushNotificationConfig/delete", { id: "t" })[0]).toStartWith("pushNotificationConfigId");
  });
});

const TASK: Task = {
  id: "t-1",
  contextId: "c-1",
  status: {
    state: "TASK_STATE_INPUT_REQUIRED",
    timestamp: "2026-01-05T10:00:00.000Z",
    message: { messageId: "m-2", role: "ROLE_AGENT", contextId: "c-1", taskId: "t-1", parts: [{ text: "Where to?" }] },
  },
  artifacts: [
    {
      artifactId: "a-1",
      name: "answer",
      parts: [
        { text: "plain", mediaType: "text/plain" },
        { raw: "aGk=", mediaType: "image/png", filename: "a.png" },
        { url: "https://files.example.com/a.pdf" },
        { data: { k: 1 } },
        { data: "just a string", metadata: { from: "agent" } },
      ],
    },
  ],
  history: [{ messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Book" }] }],
  metadata: { source: "test" },
};

describe("1.0 results written as 0.3", () => {
  test("a task: kind, lowercase state, file and data parts, every field a 0.3 Task has and no other", () => {
    const task = toV03Task(TASK);
    expect(strict(V03TaskSchema).Check(task)).toBe(true);
    expect(task).toEqual({
      kind: "task",
      id: "t-1",
      contextId: "c-1",
      status: {
        state: "input-required",
        timestamp: "2026-01-05T10:00:00.000Z",
        message: {
          kind: "message",
          messageId: "m-2",
          role: "agent",
          contextId: "c-1",
          taskId: "t-1",
          parts: [{ kind: "text", text: "Where to?" }],
        },
      },
      artifacts: [
        {
          artifactId: "a-1",
          name: "answer",
          parts: [
            { kind: "text", text: "plain" },
            { kind: "file", file: { bytes: "aGk=", mimeType: "image/png", name: "a.png" } },
            { kind: "file", file: { uri: "https://files.example.com/a.pdf" } },
            { kind: "data", data: { k: 1 } },
            { kind: "data", data: { value: "just a string" }, metadata: { from: "agent", data_part_compat: true } },
          ],
        },
      ],
      history: [{ kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "Book" }] }],
      metadata: { source: "test" },
    });
  });

  test("a wrapped data value read back by the 0.3 reader is the original value", () => {
    const written = toV03Task(TASK).artifacts?.[0]?.parts[4];
    const read = call("message/send", { message: { messageId: "m", role: "user", parts: [written] } });
    expect(read.method === "SendMessage" && read.params.message.parts[0]).toEqual({
      data: "just a string",
      metadata: { from: "agent" },
    });
  });

  test("events: the task, status updates with final, artifact updates with kind", () => {
    const events: [StreamResponse, boolean][] = [
      [{ task: TASK }, false],
      [{ statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } }, false],
      [{ statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" } } }, true],
      [
        {
          artifactUpdate: {
            taskId: "t-1",
            contextId: "c-1",
            artifact: { artifactId: "a", parts: [{ text: "Hi" }] },
            append: true,
            lastChunk: false,
          },
        },
        false,
      ],
    ];
    const written = events.map(([event, final]) => toV03Event(event, final));
    for (const event of written) expect(TypeCompiler.Compile(V03StreamEventSchema).Check(event)).toBe(true);
    expect(written.map((event) => event.kind)).toEqual(["task", "status-update", "status-update", "artifact-update"]);
    expect(written[1]).toEqual({
      kind: "status-update",
      taskId: "t-1",
      contextId: "c-1",
      status: { state: "working" },
      final: false,
    });
    expect(written[2]).toMatchObject({ status: { state: "completed" }, final: true });
    expect(written[3]).toEqual({
      kind: "artifact-update",
      taskId: "t-1",
      contextId: "c-1",
      artifact: { artifactId: "a", parts: [{ kind: "text", text: "Hi" }] },
      append: true,
      lastChunk: false,
    });
  });

  test("results per method: bare task or message, nested push configs with a list of schemes, a bare list", () => {
    expect(toV03Result("SendMessage", { task: TASK })).toMatchObject({ kind: "task", id: "t-1" });
    expect(toV03Result("SendMessage", { message: TASK.history?.[0] })).toMatchObject({ kind: "message", role: "user" });
    expect(toV03Result("CancelTask", TASK)).toMatchObject({ kind: "task" });
    const config = {
      id: "h",
      taskId: "t-1",
      url: "https://h.example",
      token: "tok",
      authentication: { scheme: "Bearer" },
    };
    const written = toV03PushConfig(config);
    expect(strict(V03TaskPushNotificationConfigSchema).Check(written)).toBe(true);
    expect(written).toEqual({
      taskId: "t-1",
      pushNotificationConfig: {
        id: "h",
        url: "https://h.example",
        token: "tok",
        authentication: { schemes: ["Bearer"] },
      },
    });
    expect(toV03Result("ListTaskPushNotificationConfigs", { configs: [config], nextPageToken: "" })).toEqual([written]);
    expect(toV03Result("DeleteTaskPushNotificationConfig", null)).toBeNull();
  });
});
