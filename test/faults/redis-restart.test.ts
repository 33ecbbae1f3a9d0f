// Scenario 4: Redis (a test-owned server with AOF everysec) shut down and restarted mid-load, and Redis paused with
// CLIENT PAUSE longer than the blocking deadline. Requests during the outage get a clear 503 STORE_UNAVAILABLE, never
// a hang; gateway and actors reconnect by themselves; afterwards the invariants hold and new tasks complete.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";
import { errorInfo, message, rpc } from "../integration/gateway/harness.ts";
import { type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { blockingEcho } from "../integration/multi/scenarios.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { checkInvariants, liveCapacityLeases } from "./invariants.ts";
import { figures, load, pool, scaled, states } from "./load.ts";

const DEADLINE_SECONDS = 3;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let key: string;
let clientId: string;

beforeAll(async () => {
  server = await startRedis({ appendonly: true });
  redis = server.client();
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_SERVER_BLOCKING_WAIT_SECONDS: String(DEADLINE_SECONDS),
      A2A_WORKER_LIVENESS_SECONDS: "30",
      A2A_SERVER_MAX_WAITING_REQUESTS: "32",
    },
  });
  [gateway] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
  ({ key, id: clientId } = await inst.client());
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
}, 30_000);

interface Outcome {
  id?: string;
  reason?: string;
  status: number;
  ms: number;
}

async function send(i: number): Promise<Outcome> {
  const started = Date.now();
  const blocking = i % 4 === 0;
  const params = {
    message: message(i % 3 === 0 ? `[sleep 200] load ${i}` : `load ${i}`),
    configuration: { returnImmediately: !blocking },
  };
  try {
    const answer = await rpc(gateway.url, "SendMessage", params, { key });
    const ms = Date.now() - started;
    if (answer.body?.result) return { id: answer.body.result.task.id, status: answer.status, ms };
    return { reason: errorInfo(answer)?.reason ?? `code ${answer.body?.error?.code}`, status: answer.status, ms };
  } catch (error) {
    return { reason: `transport: ${String(error)}`, status: 0, ms: Date.now() - started };
  }
}

test(
  "Redis shut down and restarted mid-load: 503 STORE_UNAVAILABLE during the outage, then everything finishes",
  async () => {
    const count = load(300, 3000);
    let outageMs = 0;
    const outage = (async () => {
      await Bun.sleep(1500);
      const down = Date.now();
      await redis.call("SHUTDOWN").catch(() => {}); // a clean shutdown flushes the AOF
      await Bun.sleep(2000);
      await server.restart();
      outageMs = Date.now() - down;
    })();
    // The load goes on until the outage is over, so requests meet Redis up, down and back again.
    let sent = 0;
    const outcomes: Outcome[] = [];
    await pool(8, 8, async () => {
      while (sent < count || outageMs === 0) {
        const i = sent++;
        outcomes.push(await send(i));
        await Bun.sleep(10);
      }
    });
    await outage;

    const accepted = outcomes.filter((o) => o.id !== undefined);
    const refused: Record<string, number> = {};
    for (const o of outcomes) if (o.reason) refused[o.reason] = (refused[o.reason] ?? 0) + 1;
    const unclear = outcomes.filter(
      (o) => o.reason && !["STORE_UNAVAILABLE", "BLOCKING_DEADLINE_EXCEEDED"].includes(o.reason),
    );
    expect(unclear).toEqual([]);
    expect(outcomes.filter((o) => o.reason === "STORE_UNAVAILABLE").every((o) => o.status === 503)).toBe(true);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan((DEADLINE_SECONDS + 2) * 1000);
    expect(refused.STORE_UNAVAILABLE ?? 0).toBeGreaterThan(0);

    // Recovery: new tasks complete, and every task Redis holds ends terminal.
    await waitFor(async () => (await send(-1)).id !== undefined, 20_000, "the gateway accepting again");
    await blockingEcho(gateway.url, key, "after the restart");
    const ids = await redis.zrange(inst.keys.clientTasks(0, clientId), 0, -1);
    await waitFor(
      async () =>
        (
          await states(
            redis,
            ids.map((id) => inst.keys.task(0, id)),
          )
        ).every((s) => s && /COMPLETED|FAILED/.test(s)),
      scaled(60_000),
      "every stored task terminal",
    );
    const lost = accepted.filter((o) => !ids.includes(o.id ?? "")).length;
    expect(lost).toBe(0);
    // Stored = answered with a task (accepted, or 504 with its id) + the two probes after recovery; more would be a
    // task stored for a request told 503 (possible only if a reply was lost with the connection).
    const answeredWithTask = accepted.length + (refused.BLOCKING_DEADLINE_EXCEEDED ?? 0) + 2;
    expect(ids.length).toBeGreaterThanOrEqual(answeredWithTask);
    const report = await checkInvariants(redis, inst.keys.prefix, { stuckAfterMs: 5000, requireSettled: true });
    expect(report.violations).toEqual([]);
    // A waiting lease whose release (or whose acquire's reply) was lost in the outage belongs to no request now: it
    // must lapse within its TTL (15 s), never hold a slot for good.
    const leftoverLeases = await liveCapacityLeases(redis, inst.keys.prefix);
    await waitFor(
      async () => (await liveCapacityLeases(redis, inst.keys.prefix)) === 0,
      20_000,
      "leftover leases gone",
    );
    figures("redis-restart", {
      requests: outcomes.length,
      accepted: accepted.length,
      refused,
      stored: ids.length,
      storedButRefused: ids.length - answeredWithTask,
      completed: report.byState.TASK_STATE_COMPLETED ?? 0,
      failed: report.byState.TASK_STATE_FAILED ?? 0,
      outageMs,
      slowestAnswerMs: Math.max(...outcomes.map((o) => o.ms)),
      leftoverLeasesLapsed: leftoverLeases,
      orphans: report.violations.length,
    });
  },
  scaled(110_000),
);

test("regression: a blocking request paused in Redis answers 504 at its deadline, not when the pause ends (the waiting-lease release held the answer)", async () => {
  const started = Date.now();
  const pending = rpc(gateway.url, "SendMessage", { message: message("[sleep 800] paused") }, { key });
  await Bun.sleep(300);
  await redis.call("CLIENT", "PAUSE", String((DEADLINE_SECONDS + 3) * 1000), "ALL");
  const answer = await pending;
  const ms = Date.now() - started;
  expect(answer.status).toBe(504);
  expect(errorInfo(answer).reason).toBe("BLOCKING_DEADLINE_EXCEEDED");
  expect(errorInfo(answer).metadata?.taskId).toMatch(/^[0-9A-Za-z]+$/);
  expect(ms).toBeLessThan((DEADLINE_SECONDS + 2) * 1000);
  await redis.call("CLIENT", "UNPAUSE");
  const taskId = errorInfo(answer).metadata?.taskId ?? "";
  await waitFor(
    async () => (await redis.hget(inst.keys.task(0, taskId), "state")) === "TASK_STATE_COMPLETED",
    20_000,
    "the paused task completed",
  );
  figures("client-pause", { answeredMs: ms, status: answer.status });
}, 40_000);
