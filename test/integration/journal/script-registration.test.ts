// A connection runs the scripts from its very first command, in a pipeline too: ioredis gives a pipeline only the custom
// commands defined when the pipeline was made. Found when the gateway's connection auto-pipelined (every tick's
// commands in one pipeline): a script first called in a tick that had already opened a pipeline failed ("pipeline
// [functionName] is not a function") and misaligned the replies of the other commands in it. The gateway no longer
// auto-pipelines, but a pipeline opened before a connection's first script call must still carry every script.
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

test("regression: a pipeline opened before the connection's first script call runs a script, and every reply is its own", async () => {
  const redis = createRedis({ url: server.url, cluster: [] }, "a2a-test");
  try {
    const prefix = testPrefix();
    const live = `${prefix}{0}:live`;
    const pipeline = redis.pipeline();
    pipeline.set(`${prefix}before`, "first");
    HEARTBEAT.queue(pipeline, { live }, { ttlSeconds: 60 });
    pipeline.get(live);
    const results = await pipeline.exec();
    expect(results?.map(([error]) => error)).toEqual([null, null, null]);
    const [set, beat, after] = (results ?? []).map(([, reply]) => reply);
    expect(set).toBe("OK");
    expect(typeof HEARTBEAT.decode(beat as number)).toBe("number");
    expect(after).toBe(String(beat));
  } finally {
    redis.disconnect();
  }
});
