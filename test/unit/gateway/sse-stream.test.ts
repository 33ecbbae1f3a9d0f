// One SSE response and the process-wide hub: headers and the first comment at once, a bounded queue, one end however
// it ends, keep-alive after silence, the end at the maximum duration, and the cut of a client that does not read.
import { afterEach, expect, test } from "bun:test";
import { SseStream, StreamHub, tickMs } from "../../../src/gateway/index.ts";
import { createLogger } from "../../../src/log.ts";

const logger = createLogger("test", "error");
const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const hubs: StreamHub[] = [];

function hub(keepaliveMs: number, maxDurationMs: number, maxBufferedBytes = 1 << 30): StreamHub {
  const created = new StreamHub({ keepaliveMs, maxDurationMs, maxBufferedBytes, logger });
  hubs.push(created);
  return created;
}

afterEach(() => {
  for (const created of hubs.splice(0)) created.stop();
});

test("the response is 200 text/event-stream, no-cache, unbuffered, and its first bytes are a comment", async () => {
  const stream = new SseStream(1024);
  expect(stream.response.status).toBe(200);
  expect(stream.response.headers.get("content-type")).toBe("text/event-stream");
  expect(stream.response.headers.get("cache-control")).toBe("no-cache");
  expect(stream.response.headers.get("x-accel-buffering")).toBe("no");
  const reader = stream.response.body!.getReader();
  expect(text((await reader.read()).value)).toBe(": stream open\n\n");
  stream.write(new TextEncoder().encode("data: 1\n\n"));
  stream.end("done");
  expect(text((await reader.read()).value)).toBe("data: 1\n\n");
  expect((await reader.read()).done).toBe(true);
  expect(stream.write(new Uint8Array(1))).toBe(false);
});

test("the stream is full once more than its cap is queued and unread; a reader drains it", async () => {
  const stream = new SseStream(100);
  expect(stream.full).toBe(false);
  stream.write(new Uint8Array(90));
  expect(stream.full).toBe(true);
  let drained = false;
  stream.onDrain(() => {
    drained = true;
  });
  const reader = stream.response.body!.getReader();
  await reader.read();
  await reader.read();
  expect(stream.full).toBe(false);
  await Bun.sleep(0);
  expect(drained).toBe(true);
  stream.end("stopped");
});

test("it ends once: listeners run once with the first reason; a client that cancels ends it as clientGone", async () => {
  const stream = new SseStream(1024);
  const ends: string[] = [];
  stream.onEnd((end) => ends.push(end));
  await stream.response.body!.cancel();
  stream.end("done");
  expect(ends).toEqual(["clientGone"]);
  stream.onEnd((end) => ends.push(`late ${end}`));
  expect(ends).toEqual(["clientGone", "late clientGone"]);

  const controller = new AbortController();
  const aborted = new SseStream(1024, controller.signal);
  controller.abort();
  expect(aborted.ended).toBe("clientGone");
});

test("the hub sends a keep-alive after silence, so that no gap exceeds the interval", () => {
  const streams = hub(15_000, 300_000);
  const stream = new SseStream(1024);
  streams.add(stream, "c-1");
  const tick = tickMs(15_000);
  expect(tick).toBe(1000);
  const last = stream.lastWriteAt;
  streams.tick(last + 15_000 - 2 * tick - 1);
  expect(stream.lastWriteAt).toBe(last);
  // Half a millisecond past: (last + x) - last can round below x in floating point.
  streams.tick(last + 15_000 - 2 * tick + 0.5);
  expect(stream.lastWriteAt).toBeGreaterThan(last);
});

test("the hub ends a stream at its maximum duration and forgets it", () => {
  const streams = hub(15_000, 2000);
  const stream = new SseStream(1024);
  streams.add(stream, "c-1");
  expect(streams.size).toBe(1);
  streams.tick(stream.openedAt + 1999);
  expect(stream.open).toBe(true);
  // Half a millisecond past: (openedAt + 2000) - openedAt can round below 2000 in floating point.
  streams.tick(stream.openedAt + 2000.5);
  expect(stream.ended).toBe("maxDuration");
  expect(streams.size).toBe(0);
});

test("the hub cuts a stream that stays full for half a tick, not one that drains in between", async () => {
  const streams = hub(4000, 300_000);
  const slow = new SseStream(10);
  const fast = new SseStream(10);
  streams.add(slow, "c-1");
  streams.add(fast, "c-2");
  slow.write(new Uint8Array(20));
  fast.write(new Uint8Array(20));
  const t0 = slow.openedAt + 10;
  streams.tick(t0);
  expect(slow.open && fast.open).toBe(true);
  const reader = fast.response.body!.getReader();
  await reader.read();
  await reader.read();
  streams.tick(t0 + tickMs(4000));
  expect(slow.ended).toBe("overflow");
  expect(fast.open).toBe(true);
  streams.stop();
  expect(fast.ended).toBe("stopped");
});

test("past the process-wide cap on unread bytes the hub cuts the streams holding the most, until the rest fit", () => {
  const streams = hub(15_000, 300_000, 3000);
  const [big, middle, small] = [new SseStream(10_000), new SseStream(10_000), new SseStream(10_000)];
  streams.add(big, "c-1");
  streams.add(middle, "c-2");
  streams.add(small, "c-3");
  const bytes = (n: number) => new Uint8Array(n);
  big.write(bytes(1500));
  middle.write(bytes(1000));
  small.write(bytes(400));
  // ": stream open" is queued in each as well: about 2,950 bytes in all, under the cap.
  streams.tick(performance.now());
  expect([big.open, middle.open, small.open]).toEqual([true, true, true]);
  small.write(bytes(400));
  streams.tick(performance.now());
  expect(big.ended).toBe("overflow");
  expect([middle.open, small.open]).toEqual([true, true]);
  expect(streams.size).toBe(2);
});

test("a revoked client's streams are cut; other clients' stay open", () => {
  const streams = hub(15_000, 300_000);
  const [first, second, other] = [new SseStream(1024), new SseStream(1024), new SseStream(1024)];
  streams.add(first, "revoked");
  streams.add(second, "revoked");
  streams.add(other, "fine");
  expect(streams.clients().sort()).toEqual(["fine", "revoked"]);
  expect(streams.endClient("revoked")).toBe(2);
  expect([first.ended, second.ended, other.open]).toEqual(["revoked", "revoked", true]);
  expect(streams.clients()).toEqual(["fine"]);
});
