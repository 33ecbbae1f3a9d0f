// Scenario 1: actor processes SIGKILLed at random (found by their heartbeat pids) during a few hundred echo runs, then
// the supervisor itself SIGKILLed. Every task ends terminal, none finished twice, the invariants hold.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { isRunning, waitFor } from "../integration/actors/harness.ts";
import { message, rpc } from "../integration/gateway/harness.ts";
import { ECHO_PROFILE, type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { checkInvariants, terminalEvents } from "./invariants.ts";
import { figures, load, pool, runSeed, scaled, seeded, settleAll, states } from "./load.ts";

let dir: string | undefined;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let work: Running;
let key: string;
const STUCK_AFTER_MS = 2000 + 1000 + 2000; // lease + reclaim interval + slack for a loaded machine

beforeAll(async () => {
  // The journal is kept an hour (not the default minute), so every task's terminal events can be counted at the end.
  dir = mkdtempSync(join(tmpdir(), "a2a-killed-"));
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({ profiles: [{ ...ECHO_PROFILE, journalRetentionSeconds: 3600 }] }));
  server = await startRedis();
  redis = server.client();
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_WORKER_RESTART_INTENSITY: "100000",
      A2A_WORKER_MAX_ATTEMPTS: "6",
      // Few runs per actor at once, so the load lasts long enough for several kills to land mid-run.
      A2A_WORKER_CONCURRENCY: "2",
      A2A_CONFIG: config,
    },
  });
  [gateway, work] = await Promise.all([inst.gateway(), inst.work("bun", 3)]);
  ({ key } = await inst.client());
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** Actor pids from the heartbeats (mode "consume"), alive ones only. */
async function actorPids(): Promise<number[]> {
  const ids = await redis.zrange(inst.keys.workers(), 0, -1);
  const pids: number[] = [];
  for (const id of ids) {
    const [mode, pid] = await redis.hmget(inst.keys.worker(id), "mode", "pid");
    if (mode === "consume" && pid && isRunning(Number(pid))) pids.push(Number(pid));
  }
  return [...new Set(pids)];
}

async function acceptAll(texts: readonly string[]): Promise<string[]> {
  return await pool(texts.length, 12, async (i) => {
    const body = { message: message(texts[i] ?? ""), configuration: { returnImmediately: true } };
    const answer = await rpc(gateway.url, "SendMessage", body, { key });
    if (!answer.body?.result?.task?.id) throw new Error(`accept ${i}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.result.task.id as string;
  });
}

function settle(ids: readonly string[], timeoutMs: number): Promise<(string | null)[]> {
  return settleAll(
    redis,
    ids.map((id) => inst.keys.task(0, id)),
    timeoutMs,
    work.lines,
  );
}

function artifactText(arts: string | null): string {
  const artifacts = JSON.parse(arts ?? "[]") as { parts: { text?: string }[] }[];
  return artifacts.flatMap((a) => a.parts.map((p) => p.text ?? "")).join("");
}

test(
  "actors SIGKILLed at random during echo runs: every task ends terminal, none finished twice",
  async () => {
    const seed = runSeed();
    const random = seeded(seed);
    const count = load(400, 3000);
    const texts = Array.from({ length: count }, (_, i) => (i % 3 === 0 ? `[sleep 200] run ${i}` : `run ${i}`));
    let kills = 0;
    let stop = false;
    // One kill every 0.5–1.2 s, never the last live actor: the supervisor backs off restarts of a slot that keeps dying
    // (up to 30 s), so killing every actor would test the backoff, not the recovery.
    const maxKills = load(10, 80);
    const killer = (async () => {
      while (!stop && kills < maxKills) {
        await Bun.sleep(500 + Math.floor(random() * 700));
        const pids = await actorPids();
        const victim = pids[Math.floor(random() * pids.length)];
        if (stop || victim === undefined || pids.length < 2) continue;
        process.kill(victim, "SIGKILL");
        kills += 1;
      }
    })();
    const ids = await acceptAll(texts);
    const found = await settle(ids, scaled(90_000)).finally(async () => {
      stop = true;
      await killer;
    });

    let completed = 0;
    let retried = 0;
    for (const [i, id] of ids.entries()) {
      const arts = await redis.hget(inst.keys.task(0, id), "arts");
      const [tries] = await redis.hmget(inst.keys.run(0, id), "tries");
      if (Number(tries) > 1) retried += 1;
      expect(await terminalEvents(redis, inst.keys.journal(0, id))).toBe(1);
      if (found[i] === "TASK_STATE_COMPLETED") {
        completed += 1;
        expect(artifactText(arts)).toBe(`run ${i}`);
      } else expect(found[i]).toBe("TASK_STATE_FAILED");
    }
    const deadLettered = await redis.xlen(inst.keys.dead(0));
    expect(deadLettered).toBe(count - completed);
    expect(kills).toBeGreaterThan(0);
    const report = await checkInvariants(redis, inst.keys.prefix, {
      stuckAfterMs: STUCK_AFTER_MS,
      requireSettled: true,
      liveLeasesAllowed: 0,
    });
    expect(report.violations).toEqual([]);
    figures("actors-killed", { seed, accepted: ids.length, kills, completed, retried, deadLettered, orphans: 0 });
  },
  scaled(110_000),
);

test(
  "the supervisor SIGKILLed: its actors exit, a new supervisor finishes the work",
  async () => {
    await waitFor(async () => (await actorPids()).length > 0, 40_000, "a live actor");
    const ids = await acceptAll(Array.from({ length: load(40, 400) }, (_, i) => `[sleep 300] late ${i}`));
    await waitFor(
      async () =>
        (
          await states(
            redis,
            ids.map((id) => inst.keys.task(0, id)),
          )
        ).includes("TASK_STATE_WORKING"),
      20_000,
      "a task WORKING",
    );
    const actors = await actorPids();
    expect(actors.length).toBeGreaterThan(0);
    work.child.kill("SIGKILL");
    await work.exited;
    await waitFor(
      async () => actors.every((pid) => !isRunning(pid)),
      10_000,
      "every actor of the dead supervisor gone",
    );

    work = await inst.work("bun", 3);
    const found = await settle(ids, scaled(60_000));
    expect(found.every((s) => s === "TASK_STATE_COMPLETED" || s === "TASK_STATE_FAILED")).toBe(true);
    const report = await checkInvariants(redis, inst.keys.prefix, {
      stuckAfterMs: STUCK_AFTER_MS,
      requireSettled: true,
      liveLeasesAllowed: 0,
    });
    expect(report.violations).toEqual([]);
    const completed = found.filter((s) => s === "TASK_STATE_COMPLETED").length;
    figures("supervisor-killed", { accepted: ids.length, orphanActors: 0, completed, failed: ids.length - completed });
  },
  scaled(100_000),
);
