// ProtoJSON on the wire, end to end over real HTTP and Redis: a 1.0 request in proto field names, with enum numbers,
// int32 strings, 0.3 `kind`s and fields the proto does not have, is served as its proto fields alone; nothing else is
// stored or comes back, and every answer passes the strict parser built from the A2A 1.0 proto.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { protoJsonProblem, resultProblem } from "../../support/proto-json.ts";
import { openStream } from "../../support/sse-client.ts";
import { type Harness, profile, rpc, startHarness } from "../gateway/harness.ts";

let h: Harness;
let key: string;
let clientId: string;
/** Sent in places the proto has no field for: it must be stored nowhere and come back nowhere. */
const MARKER = "not-a-proto-field";

beforeAll(async () => {
  h = await startHarness({ profiles: [profile("echo")] });
  await h.actor.live();
  ({ id: clientId, key } = await h.client());
});

afterAll(async () => {
  await h.stop();
});

/** Every stored value of the task (its hash and its journal) as one string. */
async function storedText(taskId: string): Promise<string> {
  const hash = await h.redis.hgetall(h.keys.task(0, taskId));
  const journal = await h.redis.xrange(h.keys.journal(0, taskId), "-", "+");
  return JSON.stringify([hash, journal]);
}

test("a SendMessage in proto names, enum numbers and unknown fields is stored and answered as proto fields alone", async () => {
  const sent = await rpc(
    h.gateway.url,
    "SendMessage",
    {
      message: {
        message_id: `snake-${Date.now()}`,
        role: 1,
        kind: "message",
        [MARKER]: true,
        parts: [
          { kind: "text", text: "round trip", media_type: "text/plain", [MARKER]: 1 },
          { data: { city: "Paris" }, metadata: { snake_key: "kept" } },
        ],
        metadata: { source: "proto-json test" },
      },
      configuration: { return_immediately: true, history_length: "10", [MARKER]: "x" },
      [MARKER]: { nested: true },
    },
    { key },
  );
  expect(sent.body.error).toBeUndefined();
  expect(resultProblem("SendMessage", sent.body.result)).toBeUndefined();
  const task = sent.body.result.task;
  expect(task.status.state).toBe("TASK_STATE_SUBMITTED");
  expect(task.history).toEqual([
    {
      messageId: expect.stringMatching(/^snake-/),
      role: "ROLE_USER",
      contextId: task.contextId,
      taskId: task.id,
      parts: [
        { text: "round trip", mediaType: "text/plain" },
        { data: { city: "Paris" }, metadata: { snake_key: "kept" } },
      ],
      metadata: { source: "proto-json test" },
    },
  ]);
  await h.actor.complete(await h.actor.takeOne({ taskId: task.id }, 10_000), "done");

  const got = await rpc(h.gateway.url, "GetTask", { id: task.id, history_length: 5 }, { key });
  expect(resultProblem("GetTask", got.body.result)).toBeUndefined();
  expect(got.body.result.status.state).toBe("TASK_STATE_COMPLETED");
  expect(JSON.stringify(got.body)).not.toContain(MARKER);
  expect(JSON.stringify(got.body)).not.toContain('"kind"');
  expect(await storedText(task.id)).not.toContain(MARKER);
  expect(await storedText(task.id)).not.toContain('"kind"');
});

test("ListTasks: status 0 or TASK_STATE_UNSPECIFIED is no filter, a number filters, page_size may be a string", async () => {
  const all = await rpc(h.gateway.url, "ListTasks", { status: 0, include_artifacts: true }, { key });
  expect(resultProblem("ListTasks", all.body.result)).toBeUndefined();
  expect(all.body.result.totalSize).toBeGreaterThanOrEqual(1);
  const unspecified = await rpc(h.gateway.url, "ListTasks", { status: "TASK_STATE_UNSPECIFIED" }, { key });
  expect(unspecified.body.result.totalSize).toBe(all.body.result.totalSize);
  const completed = await rpc(h.gateway.url, "ListTasks", { status: 3, page_size: "1" }, { key });
  expect(resultProblem("ListTasks", completed.body.result)).toBeUndefined();
  expect(completed.body.result.pageSize).toBe(1);
  expect(completed.body.result.tasks.map((t: { status: { state: string } }) => t.status.state)).toEqual([
    "TASK_STATE_COMPLETED",
  ]);
});

test("a stream and push configs in proto names: every event and result passes the strict parser", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: { message_id: `stream-${Date.now()}`, role: "ROLE_USER", parts: [{ kind: "text", text: "hi" }] } },
    { key },
  );
  const claim = await h.actor.takeOne({ clientId }, 10_000);
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await h.actor.complete(claim, "streamed");
  await stream.closed;
  expect(stream.events.length).toBeGreaterThanOrEqual(3);
  for (const event of stream.events) {
    const frame = JSON.parse(event.data);
    expect(protoJsonProblem("StreamResponse", frame.result)).toBeUndefined();
  }

  const created = await rpc(
    h.gateway.url,
    "CreateTaskPushNotificationConfig",
    {
      task_id: claim.taskId,
      id: "hook",
      url: "https://hooks.example.com/a2a",
      authentication: { scheme: "Bearer", [MARKER]: 1 },
    },
    { key },
  );
  expect(resultProblem("CreateTaskPushNotificationConfig", created.body.result)).toBeUndefined();
  const listed = await rpc(h.gateway.url, "ListTaskPushNotificationConfigs", { task_id: claim.taskId }, { key });
  expect(resultProblem("ListTaskPushNotificationConfigs", listed.body.result)).toBeUndefined();
  expect(JSON.stringify(listed.body)).not.toContain(MARKER);
});

test("the strict parser refuses what the proto does not define (the check can fail)", () => {
  expect(protoJsonProblem("Task", { id: "t", status: { state: "TASK_STATE_WORKING" }, kind: "task" })).toContain(
    '"kind"',
  );
  expect(protoJsonProblem("Task", { id: "t", status: { state: "working" } })).toContain("working");
  expect(
    protoJsonProblem("StreamResponse", {
      statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" }, final: true },
    }),
  ).toContain('"final"');
});
