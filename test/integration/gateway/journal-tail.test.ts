// The journal tail does not depend on every notice arriving: after its subscriber reconnects it re-reads every waited
// task at once, and a change that was never announced is found by the safety tick within ~5 s.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eventually, type Harness, message, rpc, startHarness } from "./harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: "15" } });
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
});

async function tailConnectionId(): Promise<string | undefined> {
  const list = (await h.redis.client("LIST")) as string;
  const line = list.split("\n").find((entry) => / name=a2a-gateway-tail /.test(entry));
  return /\bid=(\d+)/.exec(line ?? "")?.[1];
}

test("a change published while the subscriber was cut off is picked up as soon as it reconnects", async () => {
  const client = await h.client();
  const pending = rpc(h.gateway.url, "SendMessage", { message: message("wait") }, { key: client.key });
  const claim = await h.actor.takeOne({ clientId: client.id });
  await eventually(async () => (await h.redis.zcard(h.keys.waiting())) === 1);
  const before = await tailConnectionId();
  expect(before).toBeDefined();
  await h.redis.client("KILL", "ID", before!);
  // The PUBLISH of this transition reaches no one: the subscriber is reconnecting.
  await h.actor.complete(claim, "while away");
  const started = performance.now();
  const answer = await pending;
  expect(performance.now() - started).toBeLessThan(2000);
  expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(await tailConnectionId()).not.toBe(before);
});

test("a change that was never announced is found by the safety tick", async () => {
  const client = await h.client();
  const pending = rpc(h.gateway.url, "SendMessage", { message: message("quiet") }, { key: client.key });
  const claim = await h.actor.takeOne({ clientId: client.id });
  await eventually(async () => (await h.redis.zcard(h.keys.waiting())) === 1);
  const task = h.keys.task(0, claim.taskId);
  const rev = Number(await h.redis.hget(task, "rev"));
  const status = { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() };
  // Written without the transition script, so no PUBLISH follows.
  await h.redis.hset(task, "state", status.state, "st", JSON.stringify(status), "rev", rev + 1);
  const started = performance.now();
  const answer = await pending;
  expect(performance.now() - started).toBeLessThan(6000);
  expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
}, 20_000);
