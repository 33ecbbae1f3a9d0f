// Scenario 2: a few thousand hostile JSON-RPC requests (seeded) against a real gateway process: each class gets its
// documented error, nothing is written (every key compared before and after), the gateway keeps answering /healthz,
// and its memory comes back near its baseline.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { message, rpc } from "../integration/gateway/harness.ts";
import { type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { keysUnder, startRedis, type TestRedis } from "../support/redis.ts";
import { HOSTILE_KINDS, hostile } from "./hostile-input.ts";
import { figures, load, pool, runSeed, scaled, seeded } from "./load.ts";

const MAX_BODY_BYTES = 131_072;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let key: string;
let foreignTaskId: string;

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
  inst = await installation({ redisUrl: server.url, env: { A2A_SERVER_MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
  gateway = await inst.gateway();
  ({ key } = await inst.client());
  const other = await inst.client();
  // No actor runs here (its heartbeats would write keys): a liveness mark lets the other client's task be accepted.
  const [seconds] = await redis.time();
  await redis.set(inst.keys.live(0), String(seconds));
  const answer = await rpc(
    gateway.url,
    "SendMessage",
    { message: message("not yours"), configuration: { returnImmediately: true } },
    { key: other.key },
  );
  foreignTaskId = answer.body.result.task.id;
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
}, 30_000);

function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** POSTs a raw body; the HTTP status and the JSON-RPC error code (of the JSON answer or the first SSE event). */
async function send(body: Uint8Array): Promise<{ status: number; code: number | undefined }> {
  const response = await fetch(`${gateway.url}/a2a/echo`, {
    method: "POST",
    signal: AbortSignal.timeout(10_000),
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", Authorization: `Bearer ${key}` },
    body,
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.includes("text/event-stream")
    ? (/^data: (.*)$/m.exec(text)?.[1] ?? "{}")
    : text;
  return { status: response.status, code: (JSON.parse(json) as { error?: { code?: number } }).error?.code };
}

test(
  "a few thousand hostile requests: the documented error for each, nothing stored, the gateway unharmed",
  async () => {
    const seed = runSeed();
    const random = seeded(seed);
    const count = load(2200, 22_000);
    const before = await keysUnder(redis, inst.keys.prefix);
    const baseline = rssKb(gateway.pid);
    const context = { random, maxBodyBytes: MAX_BODY_BYTES, foreignTaskId };
    const requests = Array.from({ length: count }, (_, i) => hostile(i, context));
    const wrong: string[] = [];
    let slowest = 0;
    const byKind: Record<string, number> = {};
    await pool(count, 8, async (i) => {
      const request = requests[i];
      if (!request) return;
      const started = Date.now();
      const answer = await send(request.body).catch((error: unknown) => ({ status: 0, code: undefined, error }));
      slowest = Math.max(slowest, Date.now() - started);
      byKind[request.kind] = (byKind[request.kind] ?? 0) + 1;
      if (answer.status !== request.status || answer.code === undefined || !request.codes.includes(answer.code)) {
        const detail = "error" in answer ? String(answer.error) : `code ${answer.code}`;
        if (wrong.length < 20) wrong.push(`#${i} ${request.kind}: HTTP ${answer.status} ${detail}`);
      }
    });
    requests.length = 0;
    expect(wrong).toEqual([]);
    expect(Object.keys(byKind).sort()).toEqual([...HOSTILE_KINDS].sort());

    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await keysUnder(redis, inst.keys.prefix)).toEqual(before);
    expect(await redis.hget(inst.keys.task(0, foreignTaskId), "rev")).toBe("1");

    // Bun collects on its own schedule: give it a few seconds of idleness, then compare with the baseline.
    let after = rssKb(gateway.pid);
    for (let i = 0; i < 20 && after > baseline + 96 * 1024; i++) {
      await Bun.sleep(250);
      after = rssKb(gateway.pid);
    }
    expect(after).toBeLessThan(baseline + 96 * 1024);
    figures("hostile-input", {
      seed,
      requests: count,
      byKind,
      rssBaselineMb: baseline >> 10,
      rssAfterMb: after >> 10,
      slowestMs: slowest,
    });
  },
  scaled(110_000),
);
