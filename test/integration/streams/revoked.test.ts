// Revoking a client closes its open streams within a second, on every gateway (before the fix they ran on for up to
// server.streamMaxSeconds); another client's stream stays open, the task goes on, and the revoked key gets 401.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";
import { openStream } from "../../support/sse-client.ts";
import { type Harness, message, rpc, startHarness } from "../gateway/harness.ts";

let h: Harness;
let second: RunningGateway;

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  second = await startGateway(h.config, { port: 0, logger: createLogger("second-gateway", "error") });
});

afterAll(async () => {
  await second.stop();
  await h.stop();
});

test("a revoked client's streams on every gateway close at once; another client's stream stays open", async () => {
  const revoked = await h.client();
  const kept = await h.client();
  const opened = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("watch me") },
    { key: revoked.key },
  );
  await opened.waitForEvents(1);
  const taskId = opened.results[0].task.id as string;
  const claim = await h.actor.takeOne({ clientId: revoked.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  const elsewhere = await openStream(second.url, "SubscribeToTask", { id: taskId }, { key: revoked.key });
  await elsewhere.waitForEvents(1);
  const other = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("mine") },
    { key: kept.key },
  );
  await other.waitForEvents(1);

  const started = performance.now();
  expect(await h.clients.revoke(revoked.id)).toBe(true);
  await Promise.all([opened.closed, elsewhere.closed]);
  // The periodic safety check runs every 10 s: closing well before it shows the revocation notice did it.
  expect(performance.now() - started).toBeLessThan(5000);
  expect(other.ended).toBe(false);

  const refused = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: revoked.key });
  expect(refused.status).toBe(401);
  await h.actor.complete(claim, "finished anyway");
  const task = await h.redis.hget(h.keys.task(0, taskId), "state");
  expect(task).toBe("TASK_STATE_COMPLETED");
  const mine = await h.actor.takeOne({ clientId: kept.id });
  await h.actor.complete(mine, "done");
  await other.closed;
  expect(other.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
});
