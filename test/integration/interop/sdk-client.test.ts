// Interoperability with the official A2A JavaScript SDK (@a2a-js/sdk 1.3.0, A2A 1.0): its ClientFactory resolves our
// agent cards and its JSON-RPC client drives a real gateway (real Redis, a FakeActor moving tasks), authenticated
// through the SDK's own mechanisms: an authenticating fetch (Bearer) and a call interceptor (X-API-Key). Every card,
// result and stream event the SDK receives also passes the strict ProtoJSON parser built from the A2A 1.0 proto.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import {
  type ListTasksRequest,
  type Message,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  type CallInterceptor,
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { type Harness, profile, startHarness } from "../gateway/harness.ts";
import { emitChunks } from "../streams/helpers.ts";
import { ProtoJsonWatch } from "./proto-json-watch.ts";

let h: Harness;
let base: string;
let key: string;
let clientId: string;
/** Resolved from /.well-known/agent-card.json (the first profile, "echo"); Bearer via an authenticating fetch. */
let sdk: Client;
/** Every answer the SDK clients get passes through it. */
const watch = new ProtoJsonWatch();
const watchedOptions = {
  cardResolver: new DefaultAgentCardResolver({ fetchImpl: watch.fetch as typeof fetch }),
  transports: [new JsonRpcTransportFactory({ fetchImpl: watch.fetch as typeof fetch })],
};

function sdkMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendRequest(text: string, returnImmediately = false): SendMessageRequest {
  return {
    tenant: "",
    message: sdkMessage(text),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  };
}

const LIST_ALL: ListTasksRequest = {
  tenant: "",
  contextId: "",
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: "",
  statusTimestampAfter: undefined,
  includeArtifacts: true,
};

function asTask(result: Message | Task): Task {
  if (!("status" in result)) throw new Error("the SDK returned a message, not a task");
  return result;
}

function texts(task: Task): string[] {
  return task.artifacts.flatMap((artifact) =>
    artifact.parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")),
  );
}

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("second")] });
  base = h.gateway.url;
  await h.actor.live();
  ({ id: clientId, key } = await h.client());
  const fetchImpl = createAuthenticatingFetchWithRetry(watch.fetch as typeof fetch, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: watchedOptions.cardResolver,
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  sdk = await factory.createFromUrl(base);
});

afterEach(async () => {
  await watch.settled();
  expect(watch.problems).toEqual([]);
});

afterAll(async () => {
  // The watch saw every kind of answer: a silent watch would prove nothing.
  expect(watch.checked.cards).toBeGreaterThanOrEqual(2);
  expect(watch.checked.results).toBeGreaterThanOrEqual(15);
  expect(watch.checked.events).toBeGreaterThanOrEqual(6);
  await h.stop();
});

describe("@a2a-js/sdk client", () => {
  test("resolves the well-known card and a profile's card, and calls each profile's own endpoint", async () => {
    const card = await sdk.getAgentCard();
    expect(card.name).toBe("echo");
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${base}/a2a/echo`, protocolBinding: "JSONRPC" });
    expect(card.capabilities?.streaming).toBe(true);
    expect(Object.keys(card.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);

    // The per-profile card, with the key sent as X-API-Key by an interceptor instead of the authenticating fetch.
    const apiKeyHeader: CallInterceptor = {
      before: async (args) => {
        if (args.options?.serviceParameters) args.options.serviceParameters["X-API-Key"] = key;
      },
      after: async () => {},
    };
    const second = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        ...watchedOptions,
        clientConfig: { interceptors: [apiKeyHeader] },
      }),
    ).createFromUrl(`${base}/a2a/second/.well-known/agent-card.json`, "");
    expect((await second.getAgentCard()).supportedInterfaces[0]?.url).toBe(`${base}/a2a/second`);
    const accepted = asTask(await second.sendMessage(sendRequest("to second", true)));
    expect(await h.redis.hget(h.keys.task(0, accepted.id), "prof")).toBe("second");
    const listed = await second.listTasks(LIST_ALL);
    expect(listed.tasks.map((task) => task.id)).toEqual([accepted.id]);
    await h.actor.complete(await h.actor.takeOne({ taskId: accepted.id }, 10_000));
  }, 20_000);

  test("a blocking send returns the completed task with its artifact", async () => {
    const sending = sdk.sendMessage(sendRequest("hello sdk"));
    await h.actor.complete(await h.actor.takeOne({ clientId }, 10_000), "hello from the runtime");
    const task = asTask(await sending);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(texts(task)).toEqual(["hello from the runtime"]);
    expect(task.contextId).not.toBe("");
  }, 20_000);

  test("a non-blocking send, then GetTask before and after the actor finishes", async () => {
    const accepted = asTask(await sdk.sendMessage(sendRequest("poll me", true)));
    expect(accepted.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const before = await sdk.getTask({ tenant: "", id: accepted.id });
    expect(before.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await h.actor.complete(await h.actor.takeOne({ taskId: accepted.id }, 10_000), "polled answer");
    const after = await sdk.getTask({ tenant: "", id: accepted.id, historyLength: 1 });
    expect(after.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(texts(after)).toEqual(["polled answer"]);
    expect(after.history.length).toBeLessThanOrEqual(1);
  }, 20_000);

  test("ListTasks pages through the caller's tasks with the SDK's request and response types", async () => {
    const all = await sdk.listTasks(LIST_ALL);
    expect(all.totalSize).toBe(all.tasks.length);
    expect(all.nextPageToken).toBe("");
    const first = await sdk.listTasks({ ...LIST_ALL, pageSize: 1 });
    expect(first.pageSize).toBe(1);
    expect(first.tasks).toHaveLength(1);
    expect(first.nextPageToken).not.toBe("");
    const completed = await sdk.listTasks({ ...LIST_ALL, status: TaskState.TASK_STATE_COMPLETED });
    expect(completed.tasks.every((task) => task.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
  });

  test("CancelTask cancels a queued task; GetTask of a missing one is the SDK's TaskNotFoundError", async () => {
    const accepted = asTask(await sdk.sendMessage(sendRequest("cancel me", true)));
    const canceled = await sdk.cancelTask({ tenant: "", id: accepted.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const error = await sdk.getTask({ tenant: "", id: "no-such-task" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "TaskNotFoundError", envelopeCode: -32001 });
  });

  test("a streaming send yields the task, then status and artifact updates, ending at COMPLETED", async () => {
    const events: StreamResponse[] = [];
    const streaming = (async () => {
      for await (const event of sdk.sendMessageStream(sendRequest("stream to the sdk"))) events.push(event);
    })();
    const claim = await h.actor.takeOne({ clientId }, 10_000);
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await emitChunks(h, claim, 2, { text: (i) => ["Hi ", "there"][i] ?? "" });
    await h.actor.move(claim, "TASK_STATE_COMPLETED");
    await streaming;
    expect(events[0]?.payload?.$case).toBe("task");
    const cases = events.map((event) => event.payload?.$case);
    expect(cases.filter((c) => c === "artifactUpdate")).toHaveLength(2);
    const chunks = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [event.payload.value] : []));
    expect(chunks.map((chunk) => [chunk.append, chunk.lastChunk])).toEqual([
      [false, false],
      [true, true],
    ]);
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  }, 20_000);

  test("resubscribing to a running task starts with its snapshot and ends when it completes", async () => {
    const accepted = asTask(await sdk.sendMessage(sendRequest("resubscribe", true)));
    const claim = await h.actor.takeOne({ taskId: accepted.id }, 10_000);
    await h.actor.move(claim, "TASK_STATE_WORKING");
    const events: StreamResponse[] = [];
    const following = (async () => {
      for await (const event of sdk.resubscribeTask({ tenant: "", id: accepted.id })) events.push(event);
    })();
    while (events.length === 0) await Bun.sleep(20);
    await h.actor.complete(claim, "done");
    await following;
    const first = events[0]?.payload;
    expect(first?.$case === "task" && first.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  }, 20_000);

  test("push notification configs: create, get, list and delete through the SDK; credentials never come back", async () => {
    const task = asTask(await sdk.sendMessage(sendRequest("push me", true)));
    const created = await sdk.createTaskPushNotificationConfig({
      tenant: "",
      id: "hook-1",
      taskId: task.id,
      url: "https://hooks.example.com/a2a",
      token: "verify-me",
      authentication: { scheme: "Bearer", credentials: "webhook-secret" },
    });
    expect(created).toMatchObject({ id: "hook-1", taskId: task.id, url: "https://hooks.example.com/a2a" });
    expect(created.authentication?.scheme).toBe("Bearer");
    expect(created.authentication?.credentials ?? "").toBe("");
    const got = await sdk.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" });
    expect(got.url).toBe("https://hooks.example.com/a2a");
    const listed = await sdk.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs.map((config) => config.id)).toEqual(["hook-1"]);
    expect(JSON.stringify(listed)).not.toContain("webhook-secret");
    await sdk.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" });
    const after = await sdk.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
    expect(after.configs).toEqual([]);
    const missing = await sdk
      .getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" })
      .catch((e: unknown) => e);
    expect(missing).toMatchObject({ envelopeCode: -32001 });
  });

  test("without credentials the SDK surfaces our 401 JSON-RPC error", async () => {
    const anonymous = await new ClientFactory().createFromUrl(base);
    const error = await anonymous.listTasks(LIST_ALL).catch((e: unknown) => e);
    expect(error).toMatchObject({ envelopeCode: -32000 });
    expect(String((error as Error).message)).toContain("credentials");
  });
});
