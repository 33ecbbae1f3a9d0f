// Scenario 5: Redis full (maxmemory with noeviction). Accepts are refused cleanly with 503 STORE_UNAVAILABLE and
// nothing is half-written (every key compared before and after); once the filler key is deleted, service resumes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";
import { errorInfo, message, rpc } from "../integration/gateway/harness.ts";
import { type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { blockingEcho } from "../integration/multi/scenarios.ts";
import { keysUnder, startRedis, type TestRedis } from "../support/redis.ts";
import { checkInvariants } from "./invariants.ts";
import { figures, load, pool, SOAK, scaled, states } from "./load.ts";

let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let key: string;
let clientId: string;
const FILLER = "filler-outside-the-prefix";

beforeAll(async () => {
  // Room for the warm-up's tasks (a few KiB each) with the filler on top.
  server = await startRedis({ maxmemory: SOAK ? "64mb" : "8mb" });
  redis = server.client();
  inst = await installation({ redisUrl: server.url, env: { A2A_WORKER_LIVENESS_SECONDS: "60" } });
  [gateway] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
  ({ key, id: clientId } = await inst.client());
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
}, 30_000);

function send(i: number, blocking: boolean) {
  const params = { message: message(`full ${i}`), configuration: { returnImmediately: !blocking } };
  return rpc(gateway.url, "SendMessage", params, { key });
}

/** Appends to one key until Redis refuses with OOM; returns the bytes it holds. */
async function fill(): Promise<number> {
  const chunk = "f".repeat(128 * 1024);
  let bytes = 0;
  for (;;) {
    try {
      await redis.append(FILLER, chunk);
      bytes += chunk.length;
    } catch (error) {
      if (/OOM/.test(String(error))) return bytes;
      throw error;
    }
  }
}

test(
  "Redis full: accepts refused with 503 STORE_UNAVAILABLE, nothing half-written, service resumes when freed",
  async () => {
    const warm = load(100, 1000);
    const warmed = (await pool(warm, 8, (i) => send(i, i % 5 === 0))).filter((a) => a.body?.result).length;
    expect(warmed).toBeGreaterThan(warm / 2);
    // The keys are compared from here on, so the warm-up must be over in Redis, not only for its clients: every task
    // it queued has ended (the actors have nothing left to write, no deferred run left to queue again) and every
    // waiting lease is given back (an answer goes out at most 250 ms before its release lands).
    await waitFor(
      async () =>
        (await redis.scard(inst.keys.clientActive(0, clientId))) === 0 &&
        (await redis.zcard(inst.keys.waiting())) === 0 &&
        (await redis.zcard(inst.keys.clientWaiting(0, clientId))) === 0,
      scaled(30_000),
      "the warm-up's tasks ended and its waiting leases given back",
    );
    const filled = await fill();
    const before = await keysUnder(redis, inst.keys.prefix);

    const attempts = load(100, 1000);
    const answers = await pool(attempts, 8, (i) => send(warm + i, i % 2 === 0));
    const reasons: Record<string, number> = {};
    for (const answer of answers) {
      const reason = answer.body?.error ? `${answer.status} ${errorInfo(answer)?.reason}` : "accepted";
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    // Memory hovers at the limit, so a blocking request may now and then take a waiting lease (then lose the accept):
    // it is refused all the same, for STORE_UNAVAILABLE or, when such leases fill the slots, the waiting limit.
    const refusals = [
      "503 STORE_UNAVAILABLE",
      "503 WAITING_REQUESTS_LIMIT_EXCEEDED",
      "503 CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED",
    ];
    expect(Object.keys(reasons).filter((reason) => !refusals.includes(reason))).toEqual([]);
    expect(reasons["503 STORE_UNAVAILABLE"] ?? 0).toBeGreaterThan(attempts / 2);
    expect(answers.every((a) => Number(a.headers.get("retry-after")) > 0)).toBe(true);
    expect(await keysUnder(redis, inst.keys.prefix)).toEqual(before);

    await redis.del(FILLER);
    let last = "";
    await waitFor(
      async () => {
        const answer = await send(-1, false);
        last = JSON.stringify(answer.body);
        return answer.status === 200;
      },
      15_000,
      () => `accepts again; the last answer: ${last}`,
    );
    await blockingEcho(gateway.url, key, "after the memory freed");
    const ids = await redis.zrange(inst.keys.clientTasks(0, clientId, "echo"), 0, -1);
    await waitFor(
      async () =>
        (
          await states(
            redis,
            ids.map((id) => inst.keys.task(0, id)),
          )
        ).every((s) => s === "TASK_STATE_COMPLETED"),
      scaled(30_000),
      "every task completed",
    );
    const report = await checkInvariants(redis, inst.keys.prefix, {
      stuckAfterMs: 5000,
      requireSettled: true,
      liveLeasesAllowed: 0,
    });
    expect(report.violations).toEqual([]);
    expect(ids.length).toBe(warmed + 2);
    figures("redis-full", {
      accepted: warmed + 2,
      fillerBytes: filled,
      refused: reasons,
      keysWritten: 0,
      completed: ids.length,
      orphans: 0,
    });
  },
  scaled(100_000),
);
