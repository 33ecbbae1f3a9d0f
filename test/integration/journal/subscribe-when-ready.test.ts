// A subscription asked for while its connection is still in its handshake. ioredis writes SUBSCRIBE at once on a
// connection in that state (Redis allows it while loading), ahead of the ready check's INFO, which then fails in
// subscriber mode: the connection never became ready. Sentinel mode's longer handshake made it a gateway that failed
// to start in about one start of five; here the subscription is asked for at the very start of the handshake.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { createRedis, subscribeWhenReady } from "../../../src/journal/index.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test("regression: a subscription asked for during the handshake waits for ready, then receives", async () => {
  const channel = `${testPrefix()}events`;
  const subscriber = createRedis({ url: server.url, cluster: [] }, "a2a-test") as Redis;
  const failures: string[] = [];
  subscriber.on("error", (error: Error) => failures.push(error.message));
  const publisher = server.client();
  try {
    // "connect" is the socket up and the handshake about to start: nothing is ready yet.
    const subscribed = new Promise<void>((resolve, reject) => {
      subscriber.once("connect", () => subscribeWhenReady(subscriber, channel).then(resolve, reject));
    });
    // Without the wait, the connection loops on "Ready check failed" and no message ever comes: fail with what it said.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`never ready: ${failures.slice(0, 2).join("; ")}`)), 10_000);
    });
    try {
      await Promise.race([subscribed, stuck]);
      const received = new Promise<string>((resolve) => subscriber.once("message", (_channel, text) => resolve(text)));
      expect(await publisher.publish(channel, "hello")).toBe(1);
      expect(await Promise.race([received, stuck])).toBe("hello");
    } finally {
      clearTimeout(timer);
    }
    expect(subscriber.status).toBe("ready");
    expect(failures).toEqual([]);
  } finally {
    subscriber.disconnect();
    publisher.disconnect();
  }
});
