// The client library against a real gateway and Redis: the card leads to the endpoint, a stream is a snapshot then
// updates that a TaskTracker assembles, SubscribeToTask starts with the current task, and errors keep their reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  A2aClient,
  artifactsText,
  fetchAgentCard,
  jsonRpcInterface,
  RpcError,
  TaskTracker,
} from "../../../src/client/index.ts";
import type { StreamResponse } from "../../../src/protocol/index.ts";
import { type Harness, message, startHarness } from "../gateway/harness.ts";
import { emitChunks } from "../streams/helpers.ts";

let h: Harness;
let client: A2aClient;
let clientId: string;

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  const { id, key } = await h.client();
  clientId = id;
  const card = await fetchAgentCard(h.gateway.url);
  const endpoint = jsonRpcInterface(card)?.url ?? "";
  client = new A2aClient({ endpoint, apiKey: key });
});

afterAll(async () => {
  await h.stop();
});

describe("A2aClient against the gateway", () => {
  test("the well-known card names the JSON-RPC endpoint the client calls", async () => {
    expect(client.endpoint).toBe(`${h.gateway.url}/a2a/echo`);
    const perProfile = await fetchAgentCard(`${h.gateway.url}/a2a/echo`);
    expect(jsonRpcInterface(perProfile)?.url).toBe(client.endpoint);
  });

  test("a streamed send: the task first, then status and artifact chunks, assembled by the tracker", async () => {
    const tracker = new TaskTracker();
    const kinds: string[] = [];
    const streamed = (async () => {
      for await (const event of client.sendStreamingMessage({ message: message("stream") })) {
        kinds.push(Object.keys(event)[0] ?? "");
        tracker.apply(event);
      }
    })();
    const claim = await h.actor.takeOne({ clientId }, 10_000);
    while (kinds.length === 0) await Bun.sleep(20); // the snapshot is read before the run writes
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await emitChunks(h, claim, 3, { text: (i) => `part ${i}. ` });
    await h.actor.move(claim, "TASK_STATE_COMPLETED");
    await streamed;
    expect(kinds[0]).toBe("task");
    expect(kinds.filter((kind) => kind === "artifactUpdate")).toHaveLength(3);
    expect(tracker.state).toBe("TASK_STATE_COMPLETED");
    expect(artifactsText(tracker.task?.artifacts)).toBe("part 0. part 1. part 2. ");
    const stored = await client.getTask({ id: claim.taskId });
    expect(artifactsText(stored.artifacts)).toBe(artifactsText(tracker.task?.artifacts));
  }, 20_000);

  test("SubscribeToTask starts with the current task and ends with the task; a terminal task is -32004", async () => {
    const accepted = await client.sendMessage({
      message: message("later"),
      configuration: { returnImmediately: true },
    });
    const taskId = accepted.task?.id ?? "";
    const claim = await h.actor.takeOne({ taskId }, 10_000);
    await h.actor.move(claim, "TASK_STATE_WORKING", { text: "busy" });
    const events: StreamResponse[] = [];
    const following = (async () => {
      for await (const event of client.subscribeToTask({ id: taskId })) events.push(event);
    })();
    while (events.length === 0) await Bun.sleep(20);
    await h.actor.complete(claim, "all done");
    await following;
    expect(events[0]?.task?.status.state).toBe("TASK_STATE_WORKING");
    expect(events.at(-1)?.statusUpdate?.status.state).toBe("TASK_STATE_COMPLETED");
    const again = await (async () => {
      for await (const _ of client.subscribeToTask({ id: taskId })) return undefined;
    })().catch((error: unknown) => error);
    expect(again).toBeInstanceOf(RpcError);
    expect(again).toMatchObject({ code: -32004, reason: "UNSUPPORTED_OPERATION" });
  }, 20_000);

  test("errors keep code, reason and metadata", async () => {
    const error = await client.getTask({ id: "missing-task" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: -32001, reason: "TASK_NOT_FOUND", metadata: { taskId: "missing-task" } });
    const anonymous = new A2aClient({ endpoint: client.endpoint });
    const denied = await anonymous.listTasks({}).catch((e: unknown) => e);
    expect(denied).toMatchObject({ code: -32000, httpStatus: 401, reason: "UNAUTHENTICATED" });
  });
});
