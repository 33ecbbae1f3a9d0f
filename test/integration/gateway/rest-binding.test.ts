// The HTTP+JSON binding over real HTTP against a real Redis: every route answers what its JSON-RPC method answers, as
// the bare response message (application/a2a+json, or application/json for a client that accepts only that); fields
// come from the body or the query string (JSON or proto names); streams carry bare StreamResponses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  type AgentCard,
  ListTasksResponseSchema,
  StreamResponseSchema,
  TaskSchema,
} from "../../../src/protocol/index.ts";
import { openRestStream } from "../../support/sse-client.ts";
import { emitChunks } from "../streams/helpers.ts";
import { errorInfo, type Harness, message, profile, rest, rpc, startHarness } from "./harness.ts";

const taskShape = TypeCompiler.Compile(TaskSchema);
const listShape = TypeCompiler.Compile(ListTasksResponseSchema);
const eventShape = TypeCompiler.Compile(StreamResponseSchema);

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo"), profile("second")] });
  await h.actor.live();
  client = await h.client({ name: "rest" });
});

afterAll(async () => {
  await h.stop();
});

/** A new task through POST …/message:send with returnImmediately; answers its id. */
async function created(text: string, key = client.key, profileName = "echo"): Promise<string> {
  const answer = await rest(
    h.gateway.url,
    "POST",
    "/message:send",
    { message: message(text), configuration: { returnImmediately: true } },
    { key, profile: profileName },
  );
  expect(answer.status).toBe(200);
  return answer.body.task.id;
}

test("each profile's card lists JSON-RPC first, then HTTP+JSON, at the URL the routes hang under", async () => {
  const card = (await (await fetch(`${h.gateway.url}/a2a/second/.well-known/agent-card.json`)).json()) as AgentCard;
  expect(card.supportedInterfaces).toEqual([
    { url: `${h.gateway.url}/a2a/second`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: `${h.gateway.url}/a2a/second`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    { url: `${h.gateway.url}/a2a/second`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
  ]);
  // The card is still served below the profile's path, next to the routes.
  expect((await fetch(`${h.gateway.url}/a2a/second/.well-known/agent-card.json`)).status).toBe(200);
});

describe("POST …/message:send", () => {
  test("blocking: the completed task, wrapped as { task }, as application/a2a+json", async () => {
    const pending = rest(
      h.gateway.url,
      "POST",
      "/message:send",
      { message: message("hello rest") },
      { key: client.key },
    );
    await h.actor.complete(await h.actor.takeOne({ clientId: client.id }), "hello from the runtime");
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/a2a+json");
    expect(taskShape.Check(answer.body.task)).toBe(true);
    expect(answer.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(answer.body.task.artifacts[0].parts[0].text).toBe("hello from the runtime");
  });

  test("returnImmediately, a body sent as application/json, the answer as application/json when that alone is accepted", async () => {
    const answer = await rest(
      h.gateway.url,
      "POST",
      "/message:send",
      { message: message("json body"), configuration: { returnImmediately: true, historyLength: 0 } },
      { key: client.key, headers: { "Content-Type": "application/json; charset=utf-8", Accept: "application/json" } },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(answer.body.task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect("history" in answer.body.task).toBe(false);
    // The same task through JSON-RPC: one store, two bindings.
    const viaRpc = await rpc(h.gateway.url, "GetTask", { id: answer.body.task.id }, { key: client.key });
    expect(viaRpc.body.result.id).toBe(answer.body.task.id);
  });

  test("a repeated messageId returns the same task (one atomic accept, whatever the binding)", async () => {
    const body = { message: message("twice"), configuration: { returnImmediately: true } };
    const first = await rest(h.gateway.url, "POST", "/message:send", body, { key: client.key });
    const again = await rest(h.gateway.url, "POST", "/message:send", body, { key: client.key });
    const viaRpc = await rpc(h.gateway.url, "SendMessage", body, { key: client.key });
    expect(again.body.task.id).toBe(first.body.task.id);
    expect(viaRpc.body.result.task.id).toBe(first.body.task.id);
  });
});

describe("GET …/tasks/{id} and …/tasks", () => {
  test("GetTask answers the bare task; historyLength from the query, in either spelling", async () => {
    const id = await created("get me");
    const answer = await rest(h.gateway.url, "GET", `/tasks/${id}`, undefined, { key: client.key });
    expect(answer.status).toBe(200);
    expect(taskShape.Check(answer.body)).toBe(true);
    expect(answer.body.id).toBe(id);
    expect(answer.body.history).toHaveLength(1);
    // A task is private to its client: no shared cache may keep it.
    expect(answer.headers.get("cache-control")).toBe("no-store");
    for (const query of ["historyLength=0", "history_length=0"]) {
      const capped = await rest(h.gateway.url, "GET", `/tasks/${id}?${query}`, undefined, { key: client.key });
      expect("history" in capped.body).toBe(false);
    }
  });

  test("ListTasks: the caller's tasks in this profile, filtered and paged by query parameters", async () => {
    const lister = await h.client({ name: "lister" });
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) ids.push(await created(text, lister.key));
    await created("elsewhere", lister.key, "second");
    const canceled = await rest(h.gateway.url, "POST", `/tasks/${ids[0]}:cancel`, undefined, { key: lister.key });
    expect(canceled.body.status.state).toBe("TASK_STATE_CANCELED");

    const all = await rest(h.gateway.url, "GET", "/tasks", undefined, { key: lister.key });
    expect(listShape.Check(all.body)).toBe(true);
    expect(all.body.totalSize).toBe(3);
    expect(all.body.tasks.map((t: { id: string }) => t.id).sort()).toEqual([...ids].sort());

    const page = await rest(h.gateway.url, "GET", "/tasks?pageSize=2", undefined, { key: lister.key });
    expect(page.body.tasks).toHaveLength(2);
    expect(page.body.pageSize).toBe(2);
    const token = encodeURIComponent(page.body.nextPageToken);
    const rest2 = await rest(h.gateway.url, "GET", `/tasks?page_size=2&page_token=${token}`, undefined, {
      key: lister.key,
    });
    expect(rest2.body.tasks).toHaveLength(1);
    expect(rest2.body.nextPageToken).toBe("");

    const byStatus = await rest(h.gateway.url, "GET", "/tasks?status=TASK_STATE_CANCELED", undefined, {
      key: lister.key,
    });
    expect(byStatus.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    const contextId = canceled.body.contextId;
    const byContext = await rest(h.gateway.url, "GET", `/tasks?contextId=${contextId}`, undefined, { key: lister.key });
    expect(byContext.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    await h.actor.complete(await h.actor.takeOne({ taskId: ids[1] ?? "" }), "the answer");
    const done = "/tasks?status=TASK_STATE_COMPLETED";
    const bare = await rest(h.gateway.url, "GET", done, undefined, { key: lister.key });
    expect(bare.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[1]]);
    expect("artifacts" in bare.body.tasks[0]).toBe(false);
    const full = await rest(h.gateway.url, "GET", `${done}&include_artifacts=true`, undefined, { key: lister.key });
    expect(full.body.tasks[0].artifacts[0].parts[0].text).toBe("the answer");
    const future = await rest(
      h.gateway.url,
      "GET",
      `/tasks?statusTimestampAfter=${encodeURIComponent("2999-01-01T00:00:00Z")}`,
      undefined,
      { key: lister.key },
    );
    expect(future.body).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 });
  });
});

describe("POST …/tasks/{id}:cancel", () => {
  test("without a body (as the SDK clients send it) and with one; a canceled task is returned again", async () => {
    const id = await created("cancel me");
    const first = await rest(h.gateway.url, "POST", `/tasks/${id}:cancel`, undefined, { key: client.key });
    expect(first.status).toBe(200);
    expect(first.body.status.state).toBe("TASK_STATE_CANCELED");
    const again = await rest(
      h.gateway.url,
      "POST",
      `/tasks/${id}:cancel`,
      { metadata: { why: "twice" } },
      {
        key: client.key,
      },
    );
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(id);
  });
});

describe("streams", () => {
  test("POST …/message:stream: bare StreamResponses, the task first, closing at COMPLETED", async () => {
    const stream = await openRestStream(
      h.gateway.url,
      "POST",
      "/message:stream",
      { message: message("stream it") },
      {
        key: client.key,
      },
    );
    expect(stream.status).toBe(200);
    expect(stream.contentType).toStartWith("text/event-stream");
    expect(stream.headers["x-accel-buffering"]).toBe("no");
    await stream.waitForEvents(1);
    const claim = await h.actor.takeOne({ taskId: stream.messages[0].task.id });
    await h.actor.move(claim, "TASK_STATE_WORKING");
    await emitChunks(h, claim, 2, { text: (i) => ["Hi ", "there"][i] ?? "" });
    await h.actor.move(claim, "TASK_STATE_COMPLETED");
    await stream.until((r) => r.ended);
    const events = stream.messages;
    for (const event of events) expect(eventShape.Check(event)).toBe(true);
    expect("jsonrpc" in events[0]).toBe(false);
    expect(events[0].task.id).toBe(claim.taskId);
    expect(events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate.artifact.parts[0].text)).toEqual([
      "Hi ",
      "there",
    ]);
    expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    expect(stream.events.every((event) => event.event === undefined || event.event === "message")).toBe(true);
  });

  for (const httpMethod of ["GET", "POST"] as const) {
    test(`${httpMethod} …/tasks/{id}:subscribe: the snapshot, then newer events until the task completes`, async () => {
      const id = await created(`subscribe by ${httpMethod}`);
      const claim = await h.actor.takeOne({ taskId: id });
      await h.actor.move(claim, "TASK_STATE_WORKING");
      const stream = await openRestStream(h.gateway.url, httpMethod, `/tasks/${id}:subscribe`, undefined, {
        key: client.key,
      });
      expect(stream.status).toBe(200);
      await stream.waitForEvents(1);
      await h.actor.complete(claim, "subscribed");
      await stream.until((r) => r.ended);
      expect(stream.messages[0].task.status.state).toBe("TASK_STATE_WORKING");
      expect(stream.messages.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
    });
  }

  test("a failure after the stream opened: an error event whose data is the google.rpc.Status, then the end", async () => {
    const id = await created("vanishing");
    const stream = await openRestStream(h.gateway.url, "GET", `/tasks/${id}:subscribe`, undefined, { key: client.key });
    await stream.waitForEvents(1);
    await h.redis.del(h.keys.task(0, id));
    await h.redis.publish(h.keys.eventsChannel(), id);
    await stream.until((r) => r.ended);
    expect(stream.events).toHaveLength(2);
    expect(stream.events[1]?.event).toBe("error");
    expect(JSON.parse(stream.events[1]?.data ?? "")).toEqual({
      error: {
        code: 404,
        status: "NOT_FOUND",
        message: "Task not found",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "TASK_NOT_FOUND",
            domain: "a2a-protocol.org",
            metadata: { taskId: id },
          },
        ],
      },
    });
  });
});

describe("push notification configs", () => {
  test("create (the task from the path), get, list, delete ({}), then get is 404; credentials never come back", async () => {
    const id = await created("push me");
    const base = `/tasks/${id}/pushNotificationConfigs`;
    const config = {
      id: "hook-1",
      taskId: "some-other-task",
      url: "https://hooks.example.com/a2a",
      token: "verify-me",
      authentication: { scheme: "Bearer", credentials: "webhook-secret" },
    };
    const made = await rest(h.gateway.url, "POST", base, config, { key: client.key });
    expect(made.status).toBe(200);
    expect(made.body).toEqual({
      id: "hook-1",
      taskId: id,
      url: "https://hooks.example.com/a2a",
      token: "verify-me",
      authentication: { scheme: "Bearer" },
    });
    const got = await rest(h.gateway.url, "GET", `${base}/hook-1`, undefined, { key: client.key });
    expect(got.body).toEqual(made.body);
    const listed = await rest(h.gateway.url, "GET", base, undefined, { key: client.key });
    expect(listed.body).toEqual({ configs: [made.body], nextPageToken: "" });
    expect(JSON.stringify(listed.body)).not.toContain("webhook-secret");
    const deleted = await rest(h.gateway.url, "DELETE", `${base}/hook-1`, undefined, { key: client.key });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    const again = await rest(h.gateway.url, "DELETE", `${base}/hook-1`, undefined, { key: client.key });
    expect(again.status).toBe(200);
    const gone = await rest(h.gateway.url, "GET", `${base}/hook-1`, undefined, { key: client.key });
    expect(gone.status).toBe(404);
    expect(errorInfo(gone).reason).toBe("TASK_NOT_FOUND");
  });
});

test("GET …/extendedAgentCard: 400 UNSUPPORTED_OPERATION, as the card's capabilities say", async () => {
  const answer = await rest(h.gateway.url, "GET", "/extendedAgentCard", undefined, { key: client.key });
  expect(answer.status).toBe(400);
  expect(answer.body.error).toMatchObject({ code: 400, status: "FAILED_PRECONDITION" });
  expect(errorInfo(answer).reason).toBe("UNSUPPORTED_OPERATION");
});

test("a tenant segment before a route is accepted and ignored, as the tenant field is", async () => {
  const id = await created("tenant");
  const answer = await rest(h.gateway.url, "GET", `/acme/tasks/${id}`, undefined, { key: client.key });
  expect(answer.status).toBe(200);
  expect(answer.body.id).toBe(id);
  const sent = await rest(
    h.gateway.url,
    "POST",
    "/acme/message:send",
    { message: message("tenant send"), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  expect(sent.status).toBe(200);
});

test("A2A-Version may come as a query parameter instead of the header", async () => {
  const answer = await rest(h.gateway.url, "GET", "/tasks?A2A-Version=1.0", undefined, {
    key: client.key,
    version: null,
  });
  expect(answer.status).toBe(200);
});
