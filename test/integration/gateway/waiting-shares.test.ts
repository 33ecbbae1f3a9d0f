// One client cannot take every waiting slot: its blocking requests wait up to its share (clients.maxWaitingRequests,
// by default half of server.maxWaitingRequests), across gateways; past it HTTP 503 CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED
// with nothing stored, while another client still gets a slot.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { errorInfo, eventually, type Harness, message, retryInfo, rpc, startHarness } from "./harness.ts";

let h: Harness;

beforeAll(async () => {
  // server.maxWaitingRequests keeps its default of 4: each client's share is 2.
  h = await startHarness({ env: { A2A_SERVER_BLOCKING_WAIT_SECONDS: "20" } });
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
});

const waiting = () => h.redis.zcard(h.keys.waiting());

test("a client holding its share of waiting slots is refused a third; another client still waits and is answered", async () => {
  const greedy = await h.client();
  const polite = await h.client();
  const held = [1, 2].map((n) =>
    rpc(h.gateway.url, "SendMessage", { message: message(`hold ${n}`) }, { key: greedy.key }),
  );
  await eventually(async () => (await waiting()) === 2);
  const before = await keysUnder(h.redis, h.prefix);
  const refused = await rpc(h.gateway.url, "SendMessage", { message: message("one more") }, { key: greedy.key });
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).not.toBeNull();
  expect(refused.body.error.code).toBe(-32000);
  expect(errorInfo(refused).reason).toBe("CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED");
  expect(errorInfo(refused).metadata).toEqual({ limit: "2" });
  expect(retryInfo(refused)).toBeDefined();
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);

  const mine = rpc(h.gateway.url, "SendMessage", { message: message("my turn") }, { key: polite.key });
  const claim = await h.actor.takeOne({ clientId: polite.id });
  await h.actor.complete(claim, "done");
  expect((await mine).body.result.task.status.state).toBe("TASK_STATE_COMPLETED");

  for (const claimed of await h.actor.take(2, { clientId: greedy.id })) await h.actor.complete(claimed, "done");
  for (const answer of await Promise.all(held))
    expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(await waiting()).toBe(0);
  expect(await h.redis.zcard(h.keys.clientWaiting(0, greedy.id))).toBe(0);
});
