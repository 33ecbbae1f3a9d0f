// Interoperability with A2A 0.3 clients: the official JavaScript SDK's 0.3 line (@a2a-js/sdk 0.3.14, installed as
// @a2a-js/sdk-0.3) resolves our card and drives a real gateway over 0.3 JSON-RPC (no A2A-Version header): card,
// blocking and non-blocking sends, GetTask, cancel, streaming, resubscribe, push configs, errors and a refusal. Every
// result and stream event it receives is also checked against the 0.3 shapes, with no field they do not define.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import type {
  GetTaskPushNotificationConfigParams,
  Message,
  MessageSendParams,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from "@a2a-js/sdk-0.3";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk-0.3/client";
import { type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import {
  V03MessageSchema,
  V03StreamEventSchema,
  V03TaskPushNotificationConfigSchema,
  V03TaskSchema,
} from "../../../src/protocol/index.ts";
import { cardProblem } from "../../support/proto-json.ts";
import { SseParser } from "../../support/sse-parser.ts";
import { type Harness, profile, startHarness } from "../gateway/harness.ts";
import { emitChunks } from "../streams/helpers.ts";

let h: Harness;
let base: string;
let key: string;
let clientId: string;
let sdk: Client;

type StreamEvent = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

// What each 0.3 method answers; the check refuses any field the 0.3 shape does not define. The extended card is the
// card as the well-known URL serves it to every client ("card": the 1.0 AgentCard plus the 0.3 fields).
const RESULT_SCHEMAS: Record<string, TSchema | "list" | "card" | null> = {
  "agent/getAuthenticatedExtendedCard": "card",
  "message/send": Type.Union([V03TaskSchema, V03MessageSchema]),
  "message/stream": V03StreamEventSchema,
  "tasks/get": V03TaskSchema,
  "tasks/cancel": V03TaskSchema,
  "tasks/resubscribe": V03StreamEventSchema,
  "tasks/pushNotificationConfig/set": V03TaskPushNotificationConfigSchema,
  "tasks/pushNotificationConfig/get": V03TaskPushNotificationConfigSchema,
  "tasks/pushNotificationConfig/list": "list",
  "tasks/pushNotificationConfig/delete": null,
};

const problems: string[] = [];
let checked = 0;
const reading: Promise<void>[] = [];

function checkResult(method: string, result: unknown): void {
  checked += 1;
  const schema = RESULT_SCHEMAS[method];
  if (schema === undefined) return void problems.push(`${method}: no 0.3 method`);
  if (schema === null) return void (result === null || problems.push(`${method}: expected null`));
  if (schema === "card") {
    const problem = cardProblem(result);
    if (problem !== undefined) problems.push(`${method}: ${problem}`);
    return;
  }
  const values = schema === "list" ? (result as unknown[]) : [result];
  const shape = schema === "list" ? V03TaskPushNotificationConfigSchema : schema;
  for (const value of values) {
    const exact = Value.Equal(Value.Clean(shape, structuredClone(value)), value);
    if (!TypeCompiler.Compile(shape).Check(value) || !exact) problems.push(`${method}: ${JSON.stringify(value)}`);
  }
}

/** A fetch that checks every 0.3 answer (results and SSE events) before the SDK reads it. */
const checkingFetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
  const method = typeof init?.body === "string" ? (JSON.parse(init.body) as { method: string }).method : undefined;
  const response = await fetch(input, init);
  const type = response.headers.get("content-type") ?? "";
  if (method && type.startsWith("text/event-stream") && response.body) {
    const [mine, theirs] = response.body.tee();
    const parser = new SseParser(
      (event) => {
        const frame = JSON.parse(event.data) as { result?: unknown };
        if ("result" in frame) checkResult(method, frame.result);
      },
      () => {},
    );
    reading.push(
      (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of mine) parser.push(decoder.decode(chunk, { stream: true }));
      })(),
    );
    return new Response(theirs, { status: response.status, headers: response.headers });
  }
  if (method && type.startsWith("application/json")) {
    const body = (await response.clone().json()) as { result?: unknown };
    if ("result" in body) checkResult(method, body.result);
  }
  return response;
};

function send(text: string, blocking = true): MessageSendParams {
  return {
    message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text }] },
    configuration: { blocking },
  };
}

function asTask(result: Message | Task): Task {
  if (result.kind !== "task") throw new Error("the SDK returned a message, not a task");
  return result;
}

function texts(task: Task): string[] {
  return (task.artifacts ?? []).flatMap((artifact) =>
    artifact.parts.map((part) => (part.kind === "text" ? part.text : "")),
  );
}

async function collect(stream: AsyncGenerator<StreamEvent>, into: StreamEvent[]): Promise<void> {
  for await (const event of stream) into.push(event);
}

/** The profile's extended card, which the 0.3 client asks for (agent/getAuthenticatedExtendedCard). */
const EXTENDED = {
  description: "The echo agent, as its clients know it.",
  skills: [{ id: "echo-private", name: "Private", description: "What only clients see.", tags: ["test"] }],
};

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo", { extendedCard: EXTENDED })] });
  base = h.gateway.url;
  await h.actor.live();
  ({ id: clientId, key } = await h.client());
  const fetchImpl = createAuthenticatingFetchWithRetry(checkingFetch as typeof fetch, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  sdk = await factory.createFromUrl(base);
});

afterEach(async () => {
  await Promise.all(reading.splice(0));
  expect(problems).toEqual([]);
});

afterAll(async () => {
  expect(checked).toBeGreaterThanOrEqual(20);
  await h.stop();
});

describe("@a2a-js/sdk 0.3 client", () => {
  test("resolves the card through its 0.3 fields: endpoint, transport, capabilities, the extended card", async () => {
    // the public card says supportsAuthenticatedExtendedCard: the client asks for the extended card with its key
    const card = await sdk.getAgentCard();
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    expect(card.description).toBe(EXTENDED.description);
    expect(card.skills.map((skill) => skill.id)).toEqual(["echo", "echo-private"]);
    expect(card.url).toBe(`${base}/a2a/echo`);
    expect(card.preferredTransport).toBe("JSONRPC");
    expect(card.protocolVersion).toBe("0.3.0");
    expect(card.capabilities.streaming).toBe(true);
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  test("a blocking send returns the completed task, in 0.3 shapes", async () => {
    const sending = sdk.sendMessage(send("hello 0.3"));
    await h.actor.complete(await h.actor.takeOne({ clientId }, 10_000), "hello from the runtime");
    const task = asTask(await sending);
    expect(task.kind).toBe("task");
    expect(task.status.state).toBe("completed");
    expect(texts(task)).toEqual(["hello from the runtime"]);
    expect(task.history?.[0]).toMatchObject({
      kind: "message",
      role: "user",
      parts: [{ kind: "text", text: "hello 0.3" }],
    });
  }, 20_000);

  test("a non-blocking send answers at once; tasks/get before and after the actor finishes", async () => {
    const accepted = asTask(await sdk.sendMessage(send("poll me", false)));
    expect(accepted.status.state).toBe("submitted");
    expect((await sdk.getTask({ id: accepted.id })).status.state).toBe("submitted");
    await h.actor.complete(await h.actor.takeOne({ taskId: accepted.id }, 10_000), "polled answer");
    const after = await sdk.getTask({ id: accepted.id, historyLength: 1 });
    expect(after.status.state).toBe("completed");
    expect(texts(after)).toEqual(["polled answer"]);
    expect(after.history?.length ?? 0).toBeLessThanOrEqual(1);
  }, 20_000);

  test("tasks/cancel cancels a queued task; tasks/get of a missing one is the SDK's TaskNotFoundError", async () => {
    const accepted = asTask(await sdk.sendMessage(send("cancel me", false)));
    const canceled = await sdk.cancelTask({ id: accepted.id });
    expect(canceled.status.state).toBe("canceled");
    const error = await sdk.getTask({ id: "no-such-task" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotFoundError);
  });

  test("message/stream: the task, then kind-tagged updates, the last status update final", async () => {
    const events: StreamEvent[] = [];
    const streaming = collect(sdk.sendMessageStream(send("stream to 0.3")), events);
    const claim = await h.actor.takeOne({ clientId }, 10_000);
    while (events.length === 0) await Bun.sleep(20); // the snapshot is read before the run writes
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await emitChunks(h, claim, 2, { text: (i) => ["Hi ", "there"][i] ?? "" });
    await h.actor.move(claim, "TASK_STATE_COMPLETED");
    await streaming;
    expect(events[0]?.kind).toBe("task");
    const chunks = events.filter((event): event is TaskArtifactUpdateEvent => event.kind === "artifact-update");
    expect(chunks.map((chunk) => [chunk.append ?? false, chunk.lastChunk ?? false])).toEqual([
      [false, false],
      [true, true],
    ]);
    const updates = events.filter((event): event is TaskStatusUpdateEvent => event.kind === "status-update");
    expect(updates.map((update) => [update.status.state, update.final])).toEqual([
      ["working", false],
      ["completed", true],
    ]);
    expect(events.at(-1)).toBe(updates.at(-1));
  }, 20_000);

  test("tasks/resubscribe starts with the task's snapshot and ends with a final update; a missing task is an error", async () => {
    const accepted = asTask(await sdk.sendMessage(send("resubscribe", false)));
    const claim = await h.actor.takeOne({ taskId: accepted.id }, 10_000);
    await h.actor.move(claim, "TASK_STATE_WORKING");
    const events: StreamEvent[] = [];
    const following = collect(sdk.resubscribeTask({ id: accepted.id }), events);
    while (events.length === 0) await Bun.sleep(20);
    await h.actor.complete(claim, "done");
    await following;
    expect(events[0]).toMatchObject({ kind: "task", status: { state: "working" } });
    expect(events.at(-1)).toMatchObject({ kind: "status-update", status: { state: "completed" }, final: true });

    // The 0.3 reference server reports a failed resubscribe as an SSE error event; so do we, and the SDK maps it.
    const missing = await collect(sdk.resubscribeTask({ id: "no-such-task" }), []).catch((e: unknown) => e);
    expect((missing as Error).cause).toBeInstanceOf(TaskNotFoundError);
    const done = await collect(sdk.resubscribeTask({ id: accepted.id }), []).catch((e: unknown) => e);
    expect((done as Error).cause).toBeInstanceOf(UnsupportedOperationError);
  }, 20_000);

  test("push notification configs: set, get (with and without a config id), list and delete, in 0.3 shapes", async () => {
    const task = asTask(await sdk.sendMessage(send("push me", false)));
    const created = await sdk.setTaskPushNotificationConfig({
      taskId: task.id,
      pushNotificationConfig: {
        url: "https://hooks.example.com/a2a",
        token: "verify-me",
        authentication: { schemes: ["Bearer"], credentials: "webhook-secret" },
      },
    });
    expect(created).toEqual({
      taskId: task.id,
      pushNotificationConfig: {
        id: task.id,
        url: "https://hooks.example.com/a2a",
        token: "verify-me",
        authentication: { schemes: ["Bearer"] },
      },
    });
    expect(await sdk.getTaskPushNotificationConfig({ id: task.id })).toEqual(created);
    await sdk.setTaskPushNotificationConfig({
      taskId: task.id,
      pushNotificationConfig: { id: "second", url: "https://hooks.example.com/other" },
    });
    const byId: GetTaskPushNotificationConfigParams = { id: task.id, pushNotificationConfigId: "second" };
    const second = await sdk.getTaskPushNotificationConfig(byId);
    expect(second.pushNotificationConfig.url).toBe("https://hooks.example.com/other");
    const listed = await sdk.listTaskPushNotificationConfig({ id: task.id });
    expect(listed.map((config) => config.pushNotificationConfig.id).sort()).toEqual(["second", task.id].sort());
    expect(JSON.stringify(listed)).not.toContain("webhook-secret");
    await sdk.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: "second" });
    expect(await sdk.listTaskPushNotificationConfig({ id: task.id })).toHaveLength(1);
    const gone = await sdk.getTaskPushNotificationConfig(byId).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(TaskNotFoundError);
  });

  test("a refusal (the client's task limit) reaches the SDK as a -32000 error with its reason", async () => {
    const limited = await h.client({ limit: 1 });
    const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => ({ Authorization: `Bearer ${limited.key}` }),
      shouldRetryWithHeaders: async () => undefined,
    });
    const client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
      }),
    ).createFromUrl(base);
    const first = asTask(await client.sendMessage(send("one", false)));
    const refused = await client.sendMessage(send("two", false)).catch((e: unknown) => e);
    expect(String((refused as Error).message)).toContain("Code: -32000");
    expect(String((refused as Error).message)).toContain("CLIENT_TASK_LIMIT_EXCEEDED");
    await h.actor.complete(await h.actor.takeOne({ taskId: first.id }, 10_000));
  }, 20_000);
});
