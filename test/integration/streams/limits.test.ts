// Stream limits per task, per client and per installation (1, 2 and 3 here), held as leases in Redis: a stream over a
// limit is refused like a missing worker (503, -32000, Retry-After, ErrorInfo naming the limit, RetryInfo) and leaves
// no stream and no key behind; SendStreamingMessage refused over a limit stores no task.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { keysUnder } from "../../support/redis.ts";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { leaseCounts, streamKeys } from "./helpers.ts";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    env: {
      A2A_SERVER_MAX_STREAMS_PER_TASK: "1",
      A2A_SERVER_MAX_STREAMS_PER_CLIENT: "2",
      A2A_SERVER_MAX_STREAMS_PER_INSTALLATION: "3",
    },
  });
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
});

async function created(key: string): Promise<string> {
  const answer = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("watch me"), configuration: { returnImmediately: true } },
    { key },
  );
  return answer.body.result.task.id;
}

type Stream = Awaited<ReturnType<typeof openStream>>;

function expectRefused(stream: Stream, reason: string, limit: number): void {
  expect(stream.status).toBe(503);
  expect(stream.contentType).toBe("application/json");
  expect(stream.events).toEqual([]);
  expect(stream.headers["retry-after"]).toMatch(/^\d+$/);
  expect(stream.json.error.code).toBe(-32000);
  const [info, retry] = stream.json.error.data;
  expect(info).toMatchObject({ reason, domain: "a2a-runtime", metadata: { limit: String(limit) } });
  expect(retry).toEqual({
    "@type": "type.googleapis.com/google.rpc.RetryInfo",
    retryDelay: `${stream.headers["retry-after"]}s`,
  });
}

test("each limit refuses the stream over it, and neither a stream nor a key is left", async () => {
  const a = await h.client({ name: "a" });
  const b = await h.client({ name: "b" });
  const c = await h.client({ name: "c" });
  const [t1, t2, t3] = [await created(a.key), await created(a.key), await created(a.key)];
  const t4 = await created(b.key);
  const t5 = await created(c.key);
  const untouched = await keysUnder(h.redis, h.prefix);
  const open: Stream[] = [];
  const subscribe = (key: string, id: string) => openStream(h.gateway.url, "SubscribeToTask", { id }, { key });
  const sendNew = (key: string) =>
    openStream(h.gateway.url, "SendStreamingMessage", { message: message("new") }, { key });

  open.push(await subscribe(a.key, t1));
  await open[0]!.waitForEvents(1);
  let before = await keysUnder(h.redis, h.prefix);
  expectRefused(await subscribe(a.key, t1), "STREAMS_PER_TASK_LIMIT_EXCEEDED", 1);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  expect(await leaseCounts(h, a.id, t1)).toEqual({ installation: 1, client: 1, task: 1 });

  open.push(await subscribe(a.key, t2));
  await open[1]!.waitForEvents(1);
  before = await keysUnder(h.redis, h.prefix);
  expectRefused(await subscribe(a.key, t3), "STREAMS_PER_CLIENT_LIMIT_EXCEEDED", 2);
  expectRefused(await sendNew(a.key), "STREAMS_PER_CLIENT_LIMIT_EXCEEDED", 2);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  expect(await leaseCounts(h, a.id, t3)).toEqual({ installation: 2, client: 2, task: 0 });

  open.push(await subscribe(b.key, t4));
  await open[2]!.waitForEvents(1);
  before = await keysUnder(h.redis, h.prefix);
  expectRefused(await subscribe(c.key, t5), "STREAMS_PER_INSTALLATION_LIMIT_EXCEEDED", 3);
  expectRefused(await sendNew(c.key), "STREAMS_PER_INSTALLATION_LIMIT_EXCEEDED", 3);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(before);
  expect(h.gateway.stats()).toMatchObject({ streams: 3, streamLeases: 3 });
  const listed = await rpc(h.gateway.url, "ListTasks", {}, { key: c.key });
  expect(listed.body.result.totalSize).toBe(1);

  for (const stream of open) stream.abort();
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
  expect(await keysUnder(h.redis, h.prefix)).toEqual(untouched);
  expect(h.gateway.stats()).toEqual({ streams: 0, streamLeases: 0, followedTasks: 0 });

  // Capacity is back: the refused calls now stream.
  const now = await subscribe(c.key, t5);
  await now.waitForEvents(1);
  expect(now.results[0].task.id).toBe(t5);
  now.abort();
});
