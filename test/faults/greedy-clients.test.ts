// Scenario 6: slow SSE readers, many idle connections and a flood of blocking requests beyond maxWaitingRequests.
// The gateway stays responsive for another client, whose GetTask latency (p50/p99) is measured during the flood.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type Socket } from "node:net";
import type { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";
import { errorInfo, message, rpc } from "../integration/gateway/harness.ts";
import { type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { blockingEcho } from "../integration/multi/scenarios.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { openRawStream } from "../support/sse-client.ts";
import { checkInvariants, liveCapacityLeases } from "./invariants.ts";
import { figures, load, percentile, pool, scaled } from "./load.ts";

const MAX_WAITING = 4;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  inst = await installation({
    redisUrl: server.url,
    env: { A2A_SERVER_MAX_WAITING_REQUESTS: String(MAX_WAITING), A2A_SERVER_BLOCKING_WAIT_SECONDS: "5" },
  });
  [gateway] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
}, 30_000);

test("a flood of greedy clients: another client's GetTask stays fast; the flood is refused, not queued", async () => {
  const greedy = await inst.client();
  const polite = await inst.client();
  const port = Number(new URL(gateway.url).port);
  const own = (await blockingEcho(gateway.url, polite.key, "mine")).id as string;

  // Idle connections that never send a byte, and slow readers that never read their stream.
  const idle: Socket[] = Array.from({ length: load(200, 1000) }, () =>
    connect(port, "127.0.0.1").on("error", () => {}),
  );
  const streamed = await rpc(
    gateway.url,
    "SendMessage",
    { message: message("[chunks 400 10] ".concat("z".repeat(40_000))), configuration: { returnImmediately: true } },
    { key: greedy.key, profile: "faults" },
  );
  const slow = Array.from({ length: 8 }, () =>
    openRawStream(
      port,
      "SubscribeToTask",
      { id: streamed.body.result.task.id },
      { key: greedy.key, paused: true, profile: "faults" },
    ),
  );

  // The flood: lanes of blocking requests sent back to back for the whole measurement, far beyond the waiting limit.
  const lanes = load(60, 300);
  const floodEnd = Date.now() + 4000;
  const answers: Awaited<ReturnType<typeof rpc>>[] = [];
  const flood = pool(lanes, lanes, async (i) => {
    for (let n = 0; Date.now() < floodEnd; n++) {
      answers.push(
        await rpc(gateway.url, "SendMessage", { message: message(`[sleep 500] flood ${i}.${n}`) }, { key: greedy.key }),
      );
    }
  });
  const latencies: number[] = [];
  const wrongTask: unknown[] = [];
  const measuring = (async () => {
    await Bun.sleep(200);
    while (Date.now() < floodEnd) {
      const started = performance.now();
      const answer = await rpc(gateway.url, "GetTask", { id: own }, { key: polite.key });
      latencies.push(performance.now() - started);
      if (answer.body?.result?.id !== own) wrongTask.push(answer.body);
    }
  })();
  await Promise.all([flood, measuring]);
  expect(wrongTask).toEqual([]);
  const floodSize = answers.length;

  const outcomes: Record<string, number> = {};
  for (const answer of answers) {
    const outcome = answer.body?.result
      ? answer.body.result.task.status.state
      : `${answer.status} ${errorInfo(answer).reason}`;
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  // One greedy key meets its own share of the waiting slots (half of them) before the installation's limit.
  expect(outcomes["503 CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED"] ?? 0).toBeGreaterThan(0);
  expect(Object.keys(outcomes).every((o) => /COMPLETED|WAITING_REQUESTS_LIMIT_EXCEEDED/.test(o))).toBe(true);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  expect(p99).toBeLessThan(1500);

  for (const socket of idle) socket.destroy();
  for (const stream of slow) stream.socket.destroy();
  await blockingEcho(gateway.url, polite.key, "still served");
  // Once the greedy clients are gone, no capacity lease of theirs stays live: the gateway gives back the leases of
  // the streams whose sockets closed (long before they would lapse).
  await waitFor(
    async () => (await liveCapacityLeases(redis, inst.keys.prefix)) === 0,
    scaled(10_000),
    "the greedy clients' capacity leases given back",
  );
  const report = await checkInvariants(redis, inst.keys.prefix, { stuckAfterMs: 5000, liveLeasesAllowed: 0 });
  expect(report.violations).toEqual([]);
  figures("greedy-clients", {
    idleConnections: idle.length,
    slowReaders: slow.length,
    floodLanes: lanes,
    floodRequests: floodSize,
    outcomes,
    getTaskSamples: latencies.length,
    getTaskP50Ms: Math.round(p50 * 10) / 10,
    getTaskP99Ms: Math.round(p99 * 10) / 10,
  });
}, 60_000);
