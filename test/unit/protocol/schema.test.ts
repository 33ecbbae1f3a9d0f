// The journal schemas accept the A2A 1.0 digest examples and reject 0.3 shapes and broken oneofs.

import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  AgentCardSchema,
  ArtifactSchema,
  INTERRUPTED_STATES,
  isInterrupted,
  isTerminal,
  MessageSchema,
  PartSchema,
  ROLES,
  SecuritySchemeSchema,
  StreamResponseSchema,
  TASK_STATES,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskStatusSchema,
  TERMINAL_STATES,
} from "../../../src/protocol/index.ts";

function checker(schema: TSchema): (value: unknown) => boolean {
  const compiled = TypeCompiler.Compile(schema);
  return (value) => compiled.Check(value);
}

const isPart = checker(PartSchema);
const isMessage = checker(MessageSchema);
const isArtifact = checker(ArtifactSchema);
const isTask = checker(TaskSchema);
const isTaskStatus = checker(TaskStatusSchema);
const isStreamResponse = checker(StreamResponseSchema);
const isPushConfig = checker(TaskPushNotificationConfigSchema);
const isAgentCard = checker(AgentCardSchema);
const isSecurityScheme = checker(SecuritySchemeSchema);

// Digest §1.3: the `task` inside the SendMessage result.
const DIGEST_TASK = {
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
};

// Digest §2: the `result` of each SSE event.
const DIGEST_SSE_LINES = [
  'data: {"jsonrpc":"2.0","id":7,"result":{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}}',
  'data: {"jsonrpc":"2.0","id":7,"result":{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"# Report\\n"}]},"lastChunk":false}}}',
  'data: {"jsonrpc":"2.0","id":7,"result":{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-05T10:00:03.120Z"}}}}',
];

// Digest §7, with its "…" placeholders kept (they are valid strings).
const DIGEST_MINIMAL_CARD = {
  name: "X",
  description: "…",
  version: "1.0.0",
  supportedInterfaces: [{ url: "https://x.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "s1", name: "…", description: "…", tags: ["t"], examples: ["…"] }],
};

describe("task states and roles", () => {
  test("list the eight real states and both roles, never UNSPECIFIED", () => {
    expect(TASK_STATES).toHaveLength(8);
    expect(TASK_STATES).not.toContain("TASK_STATE_UNSPECIFIED" as never);
    expect([...ROLES]).toEqual(["ROLE_USER", "ROLE_AGENT"]);
  });

  test("classify terminal and interrupted states", () => {
    expect(TASK_STATES.filter(isTerminal).toSorted()).toEqual([...TERMINAL_STATES].sort());
    expect(TASK_STATES.filter(isInterrupted)).toEqual([...INTERRUPTED_STATES]);
    expect(isTerminal("TASK_STATE_CANCELED")).toBe(true);
    expect(isTerminal("TASK_STATE_INPUT_REQUIRED")).toBe(false);
    expect(isInterrupted("TASK_STATE_AUTH_REQUIRED")).toBe(true);
    expect(isInterrupted("TASK_STATE_WORKING")).toBe(false);
  });

  test("reject 0.3 and unknown state values", () => {
    for (const state of ["completed", "input-required", "TASK_STATE_UNSPECIFIED", "TASK_STATE_RUNNING", 3]) {
      expect(isTaskStatus({ state })).toBe(false);
    }
  });
});

describe("Part", () => {
  test("accepts each digest example, one content key each", () => {
    expect(isPart({ text: "hi", mediaType: "text/plain" })).toBe(true);
    expect(isPart({ raw: "iVBORw0KGgo=", filename: "a.png", mediaType: "image/png" })).toBe(true);
    expect(isPart({ url: "https://example.com/doc.pdf", mediaType: "application/pdf" })).toBe(true);
    expect(isPart({ data: { k: 1 }, mediaType: "application/json" })).toBe(true);
  });

  test("accepts any JSON value as data, null included", () => {
    for (const data of [null, 0, false, "s", [1, 2], { nested: { deep: true } }]) expect(isPart({ data })).toBe(true);
  });

  test("ignores unknown fields such as a leftover 0.3 kind", () => {
    expect(isPart({ kind: "text", text: "x" })).toBe(true);
  });

  test("rejects zero or two content keys", () => {
    expect(isPart({ mediaType: "text/plain" })).toBe(false);
    expect(isPart({ kind: "text" })).toBe(false);
    expect(isPart({ text: "x", data: { k: 1 } })).toBe(false);
    expect(isPart({ raw: "aGk=", url: "https://example.com/a" })).toBe(false);
  });

  test("rejects wrong content types and non-base64 raw", () => {
    expect(isPart({ text: 1 })).toBe(false);
    expect(isPart({ raw: "not base64!" })).toBe(false);
    expect(isPart({ text: "x", metadata: [] })).toBe(false);
    expect(isPart({ file: { uri: "https://example.com/a" } })).toBe(false);
  });
});

describe("Message and Artifact", () => {
  const message = { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "Book a flight" }] };

  test("accept the digest's SendMessage message", () => {
    expect(isMessage(message)).toBe(true);
    expect(isMessage({ ...message, extensions: ["https://ext.example/v1"], referenceTaskIds: ["t-0"] })).toBe(true);
  });

  test("reject 0.3 roles, empty parts and missing required fields", () => {
    expect(isMessage({ ...message, role: "user" })).toBe(false);
    expect(isMessage({ ...message, role: "ROLE_UNSPECIFIED" })).toBe(false);
    expect(isMessage({ ...message, parts: [] })).toBe(false);
    expect(isMessage({ role: "ROLE_USER", parts: message.parts })).toBe(false);
    expect(isMessage({ ...message, messageId: "" })).toBe(false);
  });

  test("artifacts need an id and at least one part", () => {
    expect(isArtifact({ artifactId: "a-1", name: "report", parts: [{ text: "# Report" }] })).toBe(true);
    expect(isArtifact({ artifactId: "a-1", parts: [] })).toBe(false);
    expect(isArtifact({ parts: [{ text: "x" }] })).toBe(false);
  });
});

describe("Task", () => {
  test("accepts the digest's task", () => {
    expect(isTask(DIGEST_TASK)).toBe(true);
  });

  test("requires a UTC timestamp ending in Z", () => {
    const at = (timestamp: string) => isTaskStatus({ state: "TASK_STATE_WORKING", timestamp });
    expect(at("2026-01-05T10:00:00.000Z")).toBe(true);
    expect(at("2026-01-05T10:00:00Z")).toBe(true);
    expect(at("2026-01-05T10:00:00.000+02:00")).toBe(false);
    expect(at("2026-01-05 10:00:00Z")).toBe(false);
    expect(at("2026-13-05T10:00:00Z")).toBe(false);
  });

  test("rejects a 0.3 task", () => {
    expect(isTask({ ...DIGEST_TASK, kind: "task", status: { state: "input-required" } })).toBe(false);
    expect(isTask({ contextId: "c-1", status: { state: "TASK_STATE_WORKING" } })).toBe(false);
  });
});

describe("StreamResponse", () => {
  test("accepts every SSE result and the push body in the digest", () => {
    for (const line of DIGEST_SSE_LINES) {
      const envelope = JSON.parse(line.slice("data: ".length)) as { result: unknown };
      expect(isStreamResponse(envelope.result)).toBe(true);
    }
    expect(isStreamResponse({ message: DIGEST_TASK.status.message })).toBe(true);
    // Digest §8: a push body is a bare StreamResponse (its "…" timestamp made concrete).
    const status = { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-05T10:00:03.120Z" };
    expect(isStreamResponse({ statusUpdate: { taskId: "t-1", contextId: "c-1", status } })).toBe(true);
  });

  test("rejects zero or two members and 0.3 event shapes", () => {
    expect(isStreamResponse({})).toBe(false);
    expect(isStreamResponse({ task: DIGEST_TASK, message: DIGEST_TASK.status.message })).toBe(false);
    expect(isStreamResponse(DIGEST_TASK)).toBe(false);
    expect(isStreamResponse({ statusUpdate: { taskId: "t-1", status: { state: "TASK_STATE_COMPLETED" } } })).toBe(
      false,
    );
  });
});

describe("TaskPushNotificationConfig", () => {
  test("accepts the flat 1.0 config", () => {
    expect(isPushConfig({ url: "https://hooks.example.com/a2a" })).toBe(true);
    expect(
      isPushConfig({
        taskId: "t-1",
        id: "p-1",
        url: "https://hooks.example.com/a2a",
        token: "tok",
        authentication: { scheme: "Bearer", credentials: "secret" },
      }),
    ).toBe(true);
  });

  test("rejects a missing url, an empty scheme and the 0.3 nested shape", () => {
    expect(isPushConfig({ taskId: "t-1" })).toBe(false);
    expect(isPushConfig({ url: "https://h.example", authentication: { scheme: "" } })).toBe(false);
    expect(isPushConfig({ taskId: "t-1", pushNotificationConfig: { url: "https://h.example" } })).toBe(false);
  });
});

describe("AgentCard", () => {
  test("accepts the digest's minimal card", () => {
    expect(isAgentCard(DIGEST_MINIMAL_CARD)).toBe(true);
  });

  test("rejects a card without interfaces or skills, or with 0.3 top-level transport fields only", () => {
    expect(isAgentCard({ ...DIGEST_MINIMAL_CARD, supportedInterfaces: [] })).toBe(false);
    expect(isAgentCard({ ...DIGEST_MINIMAL_CARD, skills: [] })).toBe(false);
    const { supportedInterfaces: _dropped, ...legacy } = DIGEST_MINIMAL_CARD;
    expect(isAgentCard({ ...legacy, url: "https://x.example.com/a2a", preferredTransport: "JSONRPC" })).toBe(false);
  });

  test("security schemes are a one-key wrapper", () => {
    expect(isSecurityScheme({ apiKeySecurityScheme: { location: "header", name: "X-API-Key" } })).toBe(true);
    expect(
      isSecurityScheme({ openIdConnectSecurityScheme: { openIdConnectUrl: "https://id.example/.well-known" } }),
    ).toBe(true);
    expect(isSecurityScheme({ mtlsSecurityScheme: {} })).toBe(true);
    const authorizationCode = { authorizationUrl: "https://a", tokenUrl: "https://t", scopes: {}, pkceRequired: true };
    expect(isSecurityScheme({ oauth2SecurityScheme: { flows: { authorizationCode } } })).toBe(true);
    const clientCredentials = { tokenUrl: "https://t", scopes: { read: "Read" } };
    expect(isSecurityScheme({ oauth2SecurityScheme: { flows: { authorizationCode, clientCredentials } } })).toBe(false);
    expect(isSecurityScheme({ apiKeySecurityScheme: { in: "header", name: "X-API-Key" } })).toBe(false);
    expect(isSecurityScheme({ apiKeySecurityScheme: { location: "body", name: "X-API-Key" } })).toBe(false);
    expect(isSecurityScheme({ type: "http", scheme: "bearer" })).toBe(false);
    expect(
      isSecurityScheme({
        httpAuthSecurityScheme: { scheme: "Bearer" },
        apiKeySecurityScheme: { location: "header", name: "X-API-Key" },
      }),
    ).toBe(false);
  });
});
