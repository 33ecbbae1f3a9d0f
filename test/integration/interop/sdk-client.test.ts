// Interoperability with the official A2A JavaScript SDK (@a2a-js/sdk 1.3.0, A2A 1.0): its ClientFactory resolves our
// agent cards, and the same matrix runs over its JSON-RPC transport, its HTTP+JSON (REST) transport and its gRPC
// transport (@a2a-js/sdk/client/grpc) against a real gateway (real Redis, a FakeActor moving tasks), authenticated
// through the SDK's own mechanisms: an authenticating fetch (Bearer; over gRPC, the same header as call metadata) and
// a call interceptor (X-API-Key). Every card, result and stream event the SDK receives over HTTP also passes the
// strict ProtoJSON parser built from the A2A 1.0 proto (gRPC messages are binary: the SDK's own decoder reads them).
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
  RestTransportFactory,
  type TransportFactory,
} from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import { eventually, type Harness, profile, startHarness } from "../gateway/harness.ts";
import { emitChunks } from "../streams/helpers.ts";
import { ProtoJsonWatch } from "./proto-json-watch.ts";

/** One of the SDK's transports, and how its errors say what the server answered. */
interface Transport {
  /** The card's protocolBinding the transport speaks. */
  readonly binding: "JSONRPC" | "HTTP+JSON" | "GRPC";
  factory(fetchImpl?: typeof fetch): TransportFactory;
  /** How a client of this transport sends a Bearer key: an authenticating fetch, or call metadata. */
  bearer(key: string): { fetchImpl?: typeof fetch; interceptors?: CallInterceptor[] };
  /** What an A2A error of JSON-RPC code `code` and HTTP+JSON status `status` carries in this transport. */
  a2aError(code: number, status: number): Record<string, unknown>;
  /** What an error of ours that the SDK has no class for carries: the JSON-RPC -32000, or the HTTP status. */
  ownError(status: number): Record<string, unknown>;
}

/** A call interceptor that sets one service parameter (an HTTP header, or gRPC metadata) on every call. */
function serviceParameter(name: string, value: string): CallInterceptor {
  return {
    before: async (args) => {
      if (args.options?.serviceParameters) args.options.serviceParameters[name] = value;
    },
    after: async () => {},
  };
}

/** A Bearer key on every request, through the SDK's authenticating fetch. */
function bearerFetch(key: string): { fetchImpl: typeof fetch } {
  const fetchImpl = createAuthenticatingFetchWithRetry(watchedFetch, {
    headers: async () => ({ Authorization: `Bearer ${key}` }),
    shouldRetryWithHeaders: async () => undefined,
  });
  return { fetchImpl };
}

/** The gRPC status code of the HTTP status the table gives the same error. */
const GRPC_CODES: Record<number, number> = { 400: 9, 401: 16, 404: 5, 503: 14 };

const TRANSPORTS: readonly Transport[] = [
  {
    binding: "JSONRPC",
    factory: (fetchImpl) => new JsonRpcTransportFactory(fetchImpl ? { fetchImpl } : {}),
    bearer: bearerFetch,
    a2aError: (code) => ({ envelopeCode: code }),
    ownError: () => ({ envelopeCode: -32000 }),
  },
  {
    binding: "HTTP+JSON",
    factory: (fetchImpl) => new RestTransportFactory(fetchImpl ? { fetchImpl } : {}),
    bearer: bearerFetch,
    a2aError: (_code, status) => ({ transport: "rest", statusCode: status }),
    ownError: (status) => ({ transport: "rest", statusCode: status }),
  },
  {
    binding: "GRPC",
    factory: () => new GrpcTransportFactory(),
    bearer: (key) => ({ interceptors: [serviceParameter("authorization", `Bearer ${key}`)] }),
    a2aError: (_code, status) => ({ transport: "grpc", status: GRPC_CODES[status] }),
    ownError: (status) => ({ transport: "grpc", status: GRPC_CODES[status] }),
  },
];

let h: Harness;
let base: string;

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

function sendRequest(text: string, returnImmediately = false, tenant = ""): SendMessageRequest {
  return {
    tenant,
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

/** What only authenticated clients of "second" see: its extended card (GetExtendedAgentCard). */
const SECOND_EXTENDED = {
  description: "The second agent, as its clients know it.",
  skills: [{ id: "second-private", name: "Private", description: "What only clients see.", tags: ["test"] }],
};

beforeAll(async () => {
  h = await startHarness({
    profiles: [profile("echo"), profile("second", { extendedCard: SECOND_EXTENDED })],
    grpc: true,
  });
  base = h.gateway.url;
  await h.actor.live();
});

/** Every answer the SDK clients get over HTTP passes through it. */
const watch = new ProtoJsonWatch();
const watchedFetch = watch.fetch as typeof fetch;

afterEach(async () => {
  await watch.settled();
  expect(watch.problems).toEqual([]);
});

afterAll(async () => {
  // The watch saw every kind of answer: a silent watch would prove nothing.
  expect(watch.checked.cards).toBeGreaterThanOrEqual(4);
  expect(watch.checked.results).toBeGreaterThanOrEqual(30);
  expect(watch.checked.events).toBeGreaterThanOrEqual(12);
  await h.stop();
});

/** A client of the SDK for one transport only, from a card at `url` (the well-known card when `path` is unset). */
async function sdkClient(
  transport: Transport,
  options: { fetchImpl?: typeof fetch; interceptors?: CallInterceptor[]; url?: string; path?: string } = {},
): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: watchedFetch }),
      // Merged with the default transports by name: the preference keeps the client on this one.
      transports: [transport.factory(options.fetchImpl ?? watchedFetch)],
      preferredTransports: [transport.binding],
      ...(options.interceptors ? { clientConfig: { interceptors: options.interceptors } } : {}),
    }),
  );
  return await factory.createFromUrl(options.url ?? base, options.path);
}

for (const transport of TRANSPORTS) {
  describe(`@a2a-js/sdk client over ${transport.binding}`, () => {
    let key: string;
    let clientId: string;
    /** Resolved from /.well-known/agent-card.json (the first profile, "echo"); Bearer via an authenticating fetch. */
    let sdk: Client;

    beforeAll(async () => {
      ({ id: clientId, key } = await h.client());
      sdk = await sdkClient(transport, transport.bearer(key));
    });

    test("resolves the well-known card and a profile's card, and calls each profile's own endpoint", async () => {
      const card = await sdk.getAgentCard();
      expect(card.name).toBe("echo");
      expect(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion, i.tenant])).toEqual([
        [`${base}/a2a/echo`, "JSONRPC", "1.0", ""],
        [`${base}/a2a/echo`, "HTTP+JSON", "1.0", ""],
        [h.gateway.grpcAddress ?? "", "GRPC", "1.0", "echo"],
        [`${base}/a2a/echo`, "JSONRPC", "0.3", ""],
      ]);
      expect(card.capabilities?.streaming).toBe(true);
      expect(Object.keys(card.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);

      // The per-profile card, with the key sent as X-API-Key by an interceptor instead of the authenticating fetch.
      const second = await sdkClient(transport, {
        interceptors: [serviceParameter("X-API-Key", key)],
        url: `${base}/a2a/second/.well-known/agent-card.json`,
        path: "",
      });
      // its public card offers an extended card, so the client fetches it (GetExtendedAgentCard) with its key
      const secondCard = await second.getAgentCard();
      expect(secondCard.capabilities?.extendedAgentCard).toBe(true);
      expect(secondCard.description).toBe(SECOND_EXTENDED.description);
      expect(secondCard.skills.map((skill) => skill.id)).toEqual(["second", "second-private"]);
      expect(secondCard.supportedInterfaces[0]?.url).toBe(`${base}/a2a/second`);
      // The interface's tenant addresses the profile (gRPC serves every profile on one port; HTTP has none).
      const tenant = secondCard.supportedInterfaces.find((i) => i.protocolBinding === transport.binding)?.tenant ?? "";
      const accepted = asTask(await second.sendMessage(sendRequest("to second", true, tenant)));
      expect(await h.redis.hget(h.keys.task(0, accepted.id), "prof")).toBe("second");
      const listed = await second.listTasks({ ...LIST_ALL, tenant });
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
      expect(all.tasks.length).toBeGreaterThan(1);
      expect(all.totalSize).toBe(all.tasks.length);
      expect(all.nextPageToken).toBe("");
      const first = await sdk.listTasks({ ...LIST_ALL, pageSize: 1 });
      expect(first.pageSize).toBe(1);
      expect(first.tasks).toHaveLength(1);
      expect(first.nextPageToken).not.toBe("");
      const next = await sdk.listTasks({ ...LIST_ALL, pageSize: 1, pageToken: first.nextPageToken });
      expect(next.tasks[0]?.id).not.toBe(first.tasks[0]?.id);
      const completed = await sdk.listTasks({ ...LIST_ALL, status: TaskState.TASK_STATE_COMPLETED });
      expect(completed.tasks.length).toBeGreaterThan(0);
      expect(completed.tasks.every((task) => task.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
    });

    test("CancelTask cancels a queued task; GetTask of a missing one is the SDK's TaskNotFoundError", async () => {
      const accepted = asTask(await sdk.sendMessage(sendRequest("cancel me", true)));
      const canceled = await sdk.cancelTask({ tenant: "", id: accepted.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const error = await sdk.getTask({ tenant: "", id: "no-such-task" }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "TaskNotFoundError", ...transport.a2aError(-32001, 404) });
      expect(JSON.stringify(error, ["metadata", "data", "taskId"])).toContain('"taskId":"no-such-task"');
    });

    test("a streaming send yields the task, then status and artifact updates, ending at COMPLETED", async () => {
      const events: StreamResponse[] = [];
      const streaming = (async () => {
        for await (const event of sdk.sendMessageStream(sendRequest("stream to the sdk"))) events.push(event);
      })();
      const claim = await h.actor.takeOne({ clientId }, 10_000);
      while (events.length === 0) await Bun.sleep(20); // the snapshot is read before the run writes
      await h.actor.move(claim, "TASK_STATE_WORKING");
      await emitChunks(h, claim, 2, { text: (i) => ["Hi ", "there"][i] ?? "" });
      await h.actor.move(claim, "TASK_STATE_COMPLETED");
      await streaming;
      expect(events[0]?.payload?.$case).toBe("task");
      const cases = events.map((event) => event.payload?.$case);
      expect(cases.filter((c) => c === "artifactUpdate")).toHaveLength(2);
      const chunks = events.flatMap((event) =>
        event.payload?.$case === "artifactUpdate" ? [event.payload.value] : [],
      );
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
      await eventually(() => events.length > 0, 10_000);
      await h.actor.complete(claim, "done");
      await following;
      const first = events[0]?.payload;
      expect(first?.$case === "task" && first.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const last = events.at(-1)?.payload;
      expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }, 20_000);

    test("resubscribing to a completed task is the SDK's UnsupportedOperationError, before any event", async () => {
      const accepted = asTask(await sdk.sendMessage(sendRequest("over already", true)));
      await h.actor.complete(await h.actor.takeOne({ taskId: accepted.id }, 10_000));
      const events: StreamResponse[] = [];
      const error = await (async () => {
        for await (const event of sdk.resubscribeTask({ tenant: "", id: accepted.id })) events.push(event);
      })().catch((e: unknown) => e);
      expect(error).toMatchObject({ name: "UnsupportedOperationError", ...transport.a2aError(-32004, 400) });
      expect(events).toEqual([]);
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
      const after = await sdk.listTaskPushNotificationConfig({
        tenant: "",
        taskId: task.id,
        pageSize: 0,
        pageToken: "",
      });
      expect(after.configs).toEqual([]);
      const missing = await sdk
        .getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" })
        .catch((e: unknown) => e);
      expect(missing).toMatchObject({ name: "TaskNotFoundError", ...transport.a2aError(-32001, 404) });
    });

    test("without credentials the SDK surfaces our 401 with its message", async () => {
      const anonymous = await sdkClient(transport);
      const error = await anonymous.listTasks(LIST_ALL).catch((e: unknown) => e);
      expect(error).toMatchObject(transport.ownError(401));
      expect(String((error as Error).message)).toContain("credentials");
    });

    test("a refusal (the client's task limit) reaches the SDK with our message; nothing was stored", async () => {
      const limited = await h.client({ limit: 1 });
      const client = await sdkClient(transport, transport.bearer(limited.key));
      const held = asTask(await client.sendMessage(sendRequest("the one allowed", true)));
      const error = await client.sendMessage(sendRequest("one too many", true)).catch((e: unknown) => e);
      expect(error).toMatchObject(transport.ownError(503));
      expect(String((error as Error).message)).toContain("as many queued and running tasks as its limit allows");
      if (transport.binding === "HTTP+JSON") {
        expect((error as { headers?: Record<string, string> }).headers?.["retry-after"]).toMatch(/^\d+$/);
      } else if (transport.binding === "GRPC") {
        // google.rpc.Status in grpc-status-details-bin: ErrorInfo with the reason, RetryInfo with the delay.
        const details = Buffer.from((error as { statusDetailsBin: Uint8Array }).statusDetailsBin).toString("latin1");
        expect(details).toContain("CLIENT_TASK_LIMIT_EXCEEDED");
        expect(details).toContain("type.googleapis.com/google.rpc.RetryInfo");
      } else {
        expect(JSON.stringify((error as { data?: unknown }).data)).toContain("CLIENT_TASK_LIMIT_EXCEEDED");
      }
      expect((await client.listTasks(LIST_ALL)).tasks.map((task) => task.id)).toEqual([held.id]);
    });
  });
}
