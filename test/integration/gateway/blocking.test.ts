// The blocking wait: a blocking SendMessage answers when its task is terminal or interrupted, never early; at
// server.blockingWaitSeconds it answers 504 with the task id and the task goes on untouched.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { errorInfo, eventually, type Harness, message, rpc, startHarness } from "./harness.ts";

let h: Harness;

beforeAll(async () => {
  // the default deadline (20 s): only the deadline's own test, on a harness of its own, waits 1 s
  h = await startHarness();
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
});

const waitingLeases = () => h.redis.zcard(h.keys.waiting());

test("a task that completes after 300 ms is returned complete, not earlier", async () => {
  const client = await h.client();
  const started = performance.now();
  const pending = rpc(h.gateway.url, "SendMessage", { message: message("slow") }, { key: client.key });
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  expect(await waitingLeases()).toBe(1);
  await Bun.sleep(300);
  await h.actor.complete(claim, "after 300 ms");
  const answer = await pending;
  expect(performance.now() - started).toBeGreaterThanOrEqual(300);
  expect(answer.status).toBe(200);
  expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(answer.body.result.task.artifacts[0].parts[0].text).toBe("after 300 ms");
  expect(await waitingLeases()).toBe(0);
});

test("past the deadline: HTTP 504, -32603, BLOCKING_DEADLINE_EXCEEDED with the task id; the task goes on", async () => {
  const short = await startHarness({ server: h.server, env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: "1" } });
  try {
    await short.actor.live();
    await pastTheDeadline(short);
  } finally {
    await short.stop();
  }
});

/** The deadline test on `short`, a harness whose blocking deadline is 1 s. */
async function pastTheDeadline(short: Harness): Promise<void> {
  const waitingLeases = () => short.redis.zcard(short.keys.waiting());
  const client = await short.client();
  const pending = rpc(short.gateway.url, "SendMessage", { message: message("too slow") }, { key: client.key });
  const claim = await short.actor.takeOne({ clientId: client.id });
  await short.actor.move(claim, "TASK_STATE_WORKING");
  const answer = await pending;
  expect(answer.status).toBe(504);
  expect(answer.body.error.code).toBe(-32603);
  expect(errorInfo(answer)).toEqual({
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: "BLOCKING_DEADLINE_EXCEEDED",
    domain: "a2a-runtime",
    metadata: { taskId: claim.taskId, blockingWaitSeconds: "1" },
  });
  await eventually(async () => (await waitingLeases()) === 0); // the answer waits at most 250 ms for the release

  const running = await rpc(short.gateway.url, "GetTask", { id: claim.taskId }, { key: client.key });
  expect(running.body.result.status.state).toBe("TASK_STATE_WORKING");
  const listed = await rpc(short.gateway.url, "ListTasks", {}, { key: client.key });
  expect(listed.body.result.tasks.map((t: { id: string }) => t.id)).toEqual([claim.taskId]);

  await short.actor.complete(claim, "late");
  const done = await rpc(short.gateway.url, "GetTask", { id: claim.taskId }, { key: client.key });
  expect(done.body.result.status.state).toBe("TASK_STATE_COMPLETED");
}

test("INPUT_REQUIRED ends the wait; the follow-up with taskId resumes the same task and waits again", async () => {
  const client = await h.client();
  const first = rpc(h.gateway.url, "SendMessage", { message: message("book a flight") }, { key: client.key });
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "From where to where?" });
  const asked = (await first).body.result.task;
  expect(asked.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  expect(asked.status.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "From where to where?" }] });

  const second = rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("Oslo to Rome", { taskId: asked.id }), configuration: { historyLength: 2 } },
    { key: client.key },
  );
  const again = await h.actor.takeOne({ taskId: asked.id });
  await h.actor.complete(again, "booked");
  const answer = (await second).body.result.task;
  expect(answer.id).toBe(asked.id);
  expect(answer.contextId).toBe(asked.contextId);
  expect(answer.status.state).toBe("TASK_STATE_COMPLETED");
  expect(answer.history.map((m: { role: string }) => m.role)).toEqual(["ROLE_AGENT", "ROLE_USER"]);
  expect(answer.history[1]).toMatchObject({ taskId: asked.id, contextId: asked.contextId });
});

test("a follow-up past server.maxHistoryBytes is -32602 TASK_HISTORY_LIMIT_EXCEEDED; one that fits resumes", async () => {
  const bounded = await startHarness({ server: h.server, env: { A2A_SERVER_MAX_HISTORY_BYTES: "3000" } });
  try {
    await bounded.actor.live();
    const client = await bounded.client();
    const first = rpc(bounded.gateway.url, "SendMessage", { message: message("book a flight") }, { key: client.key });
    const claim = await bounded.actor.takeOne({ clientId: client.id });
    await bounded.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "From where to where?" });
    const asked = (await first).body.result.task;
    const followUp = (text: string) =>
      rpc(
        bounded.gateway.url,
        "SendMessage",
        { message: message(text, { taskId: asked.id }), configuration: { returnImmediately: true } },
        { key: client.key },
      );
    const refused = await followUp("o".repeat(3_000));
    expect(refused.body.error.code).toBe(-32602);
    expect(errorInfo(refused).reason).toBe("TASK_HISTORY_LIMIT_EXCEEDED");
    const task = await rpc(bounded.gateway.url, "GetTask", { id: asked.id }, { key: client.key });
    expect(task.body.result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const taken = await followUp("Oslo to Rome");
    expect(taken.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  } finally {
    await bounded.stop();
  }
});

test("a client that goes away gives its waiting slot back before the deadline", async () => {
  const client = await h.client();
  const controller = new AbortController();
  const pending = fetch(`${h.gateway.url}/a2a/echo`, {
    method: "POST",
    headers: { Authorization: `Bearer ${client.key}`, "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: message("bye") } }),
    signal: controller.signal,
  }).catch(() => undefined);
  await eventually(async () => (await waitingLeases()) === 1);
  controller.abort();
  await pending;
  // given back when the client left: well before the 20 s deadline, and before the lease's own 15 s TTL
  await eventually(async () => (await waitingLeases()) === 0, 5000);
});
