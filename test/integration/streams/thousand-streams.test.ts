// One tail per gateway process: 1,000 SSE streams open at once in one gateway use exactly the Redis connections one
// stream uses (CLIENT LIST), and every stream still gets its own task's events.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openRawStream, type StreamRecording } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { journal, streamKeys } from "./helpers.ts";

const STREAMS = 1000;

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness({
    env: {
      A2A_SERVER_MAX_STREAMS_PER_CLIENT: String(STREAMS * 2),
      A2A_SERVER_MAX_STREAMS_PER_INSTALLATION: String(STREAMS * 2),
    },
  });
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

/** Connections to the test's Redis: all of them, and those the gateway named. */
async function connections(): Promise<{ total: number; gateway: number }> {
  const list = (await h.redis.client("LIST")) as string;
  const lines = list.split("\n").filter((line) => line.trim() !== "");
  return { total: lines.length, gateway: lines.filter((line) => / name=a2a-gateway/.test(line)).length };
}

async function createTasks(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 100) {
    const batch = Array.from({ length: Math.min(100, count - start) }, () =>
      rpc(
        h.gateway.url,
        "SendMessage",
        { message: message("one of many"), configuration: { returnImmediately: true } },
        { key: client.key },
      ),
    );
    for (const answer of await Promise.all(batch)) ids.push(answer.body.result.task.id);
  }
  return ids;
}

const subscribe = (taskId: string) =>
  openRawStream(h.gateway.port, "SubscribeToTask", { id: taskId }, { key: client.key });

test("1,000 open streams use the Redis connections of one, and each gets its task's events", async () => {
  const taskIds = await createTasks(STREAMS);
  const streams: StreamRecording[] = [subscribe(taskIds[0]!)];
  await streams[0]!.waitForEvents(1);
  const withOne = await connections();
  expect(withOne.gateway).toBe(2);

  for (const taskId of taskIds.slice(1)) streams.push(subscribe(taskId));
  await eventually(() => h.gateway.stats().streams === STREAMS, 20_000);
  await Promise.all(streams.map((stream) => stream.waitForEvents(1, 20_000)));
  const withMany = await connections();
  expect(withMany.gateway).toBe(withOne.gateway);
  expect(withMany.total).toBeLessThanOrEqual(withOne.total);
  expect(h.gateway.stats()).toEqual({ streams: STREAMS, streamLeases: STREAMS, followedTasks: STREAMS });

  const claims = await h.actor.take(STREAMS, { clientId: client.id }, 15_000);
  expect(claims).toHaveLength(STREAMS);
  for (let start = 0; start < claims.length; start += 100) {
    await Promise.all(claims.slice(start, start + 100).map((claim) => h.actor.complete(claim)));
  }
  await Promise.all(streams.map((stream) => stream.closed));

  for (const [index, stream] of streams.entries()) {
    const taskId = taskIds[index]!;
    expect(stream.status).toBe(200);
    expect(stream.results[0].task.id).toBe(taskId);
    expect(stream.results.slice(1)).toEqual((await journal(h, taskId)).map((entry) => entry.event));
    expect(stream.results.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  }
  await eventually(async () => (await streamKeys(h)).length === 0, 2000);
  expect(h.gateway.stats()).toEqual({ streams: 0, streamLeases: 0, followedTasks: 0 });
}, 60_000);
