// A connection that sends commands of one tick as one pipeline (the gateway's) runs the scripts from its very first
// command: ioredis gives a pipeline only the custom commands defined when the pipeline was made, so a script first
// called in a tick that had already opened a pipeline failed ("pipeline[functionName] is not a function") and
// misaligned the replies of the other commands in it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRedis } from "../../../src/journal/index.ts";
import { HEARTBEAT } from "../../../src/journal/lua/heartbeat.ts";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";

let server: TestRedis;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

test("regression: a script first called in a tick whose pipeline another command opened runs, and every reply is its own", async () => {
  const redis = createRedis({ url: server.url, cluster: [] }, "a2a-test", { autoPipelining: true });
  try {
    const prefix = testPrefix();
    await redis.set(`${prefix}before`, "first");
    const live = `${prefix}{0}:live`;
    const [before, beat, after] = await Promise.all([
      redis.get(`${prefix}before`),
      HEARTBEAT.run(redis, { live }, { ttlSeconds: 60 }),
      redis.get(live),
    ]);
    expect(before).toBe("first");
    expect(typeof beat).toBe("number");
    expect(after).toBe(String(beat));
  } finally {
    redis.disconnect();
  }
});
