// Keep-alive with the real default (server.streamKeepaliveSeconds = 15): a stream with no events for 40 s stays open,
// receives comment lines no more than 15 s apart, keeps its lease renewed, and still delivers the task's next event.
// About 41 s.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openStream } from "../../support/sse-client.ts";
import { type Harness, message, startHarness } from "../gateway/harness.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

test("40 s without events: the stream stays open with comment lines at most 15 s apart", async () => {
  expect(h.config.server.streamKeepaliveSeconds).toBe(15);
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("quiet") },
    {
      key: client.key,
    },
  );
  await stream.waitForEvents(1);
  const claim = await h.actor.takeOne({ clientId: client.id });
  const started = performance.now();
  await Bun.sleep(40_000);
  expect(stream.ended).toBe(false);
  expect(stream.events).toHaveLength(1);
  // 40 s is twice the stream lease's TTL: the lease is still held, renewed in its slice.
  expect(await h.redis.zcount(h.keys.streams(), `(${Date.now()}`, "+inf")).toBe(1);
  const times = [started, ...stream.comments.filter((c) => c.at > started).map((c) => c.at), performance.now()];
  expect(times.length).toBeGreaterThanOrEqual(4);
  const gaps = times.slice(1).map((at, i) => at - times[i]!);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(15_000);
  expect(stream.comments.every((comment) => comment.text === "keep-alive" || comment.text === "stream open")).toBe(
    true,
  );

  await h.actor.complete(claim);
  await stream.closed;
  expect(stream.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
}, 45_000);
