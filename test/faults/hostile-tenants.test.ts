// Scenario: an attacker with a valid key (a fresh one per attack, so that one attack's spent budget does not blunt the
// next) tries, one attack after another, to freeze the gateway, stop the workers, fill Redis, park interrupted tasks,
// crowd others out of waiting and worker slots, stall streams, route around a proxy and outlive its revocation,
// against an installation of gateway + supervisor processes with the default handler.
// Meanwhile a second client does steady GetTask and blocking SendMessage: its p99 stays within a small factor of its
// idle p99, no process exits, Redis grows only within the attacker's budget, and nothing is stored half way.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { waitFor } from "../integration/actors/harness.ts";
import { errorInfo, message, post, type RpcAnswer, rpc } from "../integration/gateway/harness.ts";
import { ECHO_PROFILE, type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { startRedis, type TestRedis } from "../support/redis.ts";
import { openRawStream } from "../support/sse-client.ts";
import { checkInvariants } from "./invariants.ts";
import { figures, percentile, pool } from "./load.ts";

const MiB = 1024 * 1024;
/** The attacker's storage budget (clients.maxStoredBytes): small, so that it is reached within the test. */
const BUDGET = 16 * MiB;
/** A 1 MB message, just under server.maxBodyBytes with its envelope. */
const BIG = 1_000_000;
/** What one run in flight may add past the budget: its answer as an artifact and a journal entry (counted, not cut). */
const ONE_RUN_OUTPUT = 2 * BIG + 64 * 1024;
/** Allocator size classes for megabyte values, buffers of calls in flight, keys and indexes (docs/operations.md). */
const OVERHEAD = (BUDGET + ONE_RUN_OUTPUT) / 4 + 8 * MiB;
/** What one of the victim's finished echo tasks holds in Redis, generously (~2 KiB measured, docs/benchmarks.md). */
const VICTIM_TASK_BYTES = 4 * 1024;
const MAX_INTERRUPTED = 10;
const STREAM_BUFFERS_MAX = 8 * MiB;
/** How long each attack runs while the victim measures. */
const ATTACK_MS = 3000;

let dir: string;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let work: Running;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-hostile-"));
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({ profiles: [ECHO_PROFILE] }));
  server = await startRedis();
  redis = server.client();
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_CONFIG: config,
      A2A_CLIENTS_MAX_STORED_BYTES: String(BUDGET),
      A2A_CLIENTS_MAX_INTERRUPTED_TASKS: String(MAX_INTERRUPTED),
      A2A_CLIENTS_MAX_RUNNING_TASKS: "2",
      A2A_WORKER_CONCURRENCY: "4",
      A2A_SERVER_BLOCKING_WAIT_SECONDS: "15",
      A2A_SERVER_STREAM_BUFFER_MAX_BYTES: String(2 * MiB),
      A2A_SERVER_STREAM_BUFFERS_MAX_BYTES: String(STREAM_BUFFERS_MAX),
      // Long enough that nothing the attacker stores is purged during the test: growth is measured against the budget.
      A2A_WORKER_LIVENESS_SECONDS: "30",
    },
  });
  [gateway, work] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

interface Sample {
  phase: string;
  ms: number;
  ok: boolean;
  what: string;
}

/** The victim: GetTask of its own task and a blocking echo, one after the other, until stopped. */
function victim(key: string, ownTask: string, phase: () => string) {
  const samples: Sample[] = [];
  let running = true;
  const done = (async () => {
    for (let n = 0; running; n++) {
      const started = performance.now();
      const answer =
        n % 2 === 0
          ? await rpc(gateway.url, "GetTask", { id: ownTask }, { key })
          : await rpc(gateway.url, "SendMessage", { message: message(`victim ${n}`) }, { key });
      const ok =
        n % 2 === 0
          ? answer.body?.result?.id === ownTask
          : answer.body?.result?.task?.status?.state === "TASK_STATE_COMPLETED";
      const what = ok ? "ok" : `${answer.status} ${answer.body?.error ? errorInfo(answer)?.reason : "?"}`;
      samples.push({ phase: phase(), ms: performance.now() - started, ok, what });
    }
  })();
  return {
    samples,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Resident memory of a process in MiB (Linux /proc). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

/** One raw HTTP/1.1 request with exactly this Host header; resolves with the status. */
function rawStatus(path: string, host: string): Promise<number> {
  const port = Number(new URL(gateway.url).port);
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("end", () => resolve(Number(text.split(" ")[1])));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** Redis's used_memory, in bytes. */
async function usedMemory(): Promise<number> {
  return Number((await redis.info("memory")).match(/used_memory:(\d+)/)?.[1]);
}

/** The gateway's open SSE streams, as its /metrics reports them. */
async function openStreams(): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  return Number(text.match(/^a2a_open_streams (\d+)/m)?.[1] ?? Number.NaN);
}

/** Runs `attack` in `lanes` loops until `ms` passed; returns every answer's outcome, counted. */
async function during(
  ms: number,
  lanes: number,
  attack: (lane: number, n: number) => Promise<RpcAnswer | string>,
): Promise<Record<string, number>> {
  const end = Date.now() + ms;
  const outcomes: Record<string, number> = {};
  await pool(lanes, lanes, async (lane) => {
    for (let n = 0; Date.now() < end; n++) {
      const answer = await attack(lane, n);
      const outcome =
        typeof answer === "string"
          ? answer
          : answer.body?.error
            ? `${answer.status} ${errorInfo(answer)?.reason ?? answer.body.error.code}`
            : `${answer.status} ok`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
  });
  return outcomes;
}

test("one key attacks in every known way; another client's p99 stays near idle, no process exits, Redis stays in budget", async () => {
  // The victim has no storage limit of its own: on a fast machine its echoes would otherwise fill the budget that
  // A2A_CLIENTS_MAX_STORED_BYTES sets for every client, and it would be refused for its own tasks, not the attacker's.
  const victimClient = await inst.client(0, { maxStoredBytes: 0 });
  const own = await rpc(
    gateway.url,
    "SendMessage",
    { message: message("the victim's task") },
    { key: victimClient.key },
  );
  const ownTask = own.body.result.task.id as string;
  let phase = "idle";
  const measuring = victim(victimClient.key, ownTask, () => phase);
  try {
    const attacks: Record<string, Record<string, number>> = {};
    const gatewayRssStart = rssMb(gateway.pid);
    await Bun.sleep(ATTACK_MS); // the idle baseline: the victim measures for as long as each attack lasts

    // Freeze the gateway: nesting tens of thousands of levels deep, refused before it is parsed.
    phase = "deep nesting";
    const attacker = await inst.client();
    const deep = (depth: number) =>
      `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"d","role":"ROLE_USER",` +
      `"parts":[{"text":"x"}],"metadata":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}}}`;
    attacks[phase] = await during(ATTACK_MS, 4, () => post(gateway.url, deep(60_000), { key: attacker.key }));
    expect(Object.keys(attacks[phase] ?? {})).toEqual(["200 INVALID_REQUEST"]);

    // Crowd others out with bodies sent without a key: refused from the headers, the body never read.
    phase = "keyless bodies";
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { pad: "p".repeat(BIG) } });
    attacks[phase] = await during(ATTACK_MS, 8, () => post(gateway.url, body));
    expect(Object.keys(attacks[phase] ?? {})).toEqual(["401 UNAUTHENTICATED"]);

    // Stop the workers: the default handler does not obey [crash] or [hang], and refuses long waits and huge chunks.
    phase = "handler faults";
    const faulty = await inst.client();
    const faults = ["[crash]", "[hang]", "[sleep 99999999]", "[chunks 100000 1]"];
    const faultTasks: string[] = [];
    const faultAnswers = await pool(40, 4, (n) =>
      rpc(
        gateway.url,
        "SendMessage",
        { message: message(`${faults[n % faults.length]} x`), configuration: { returnImmediately: true } },
        { key: faulty.key },
      ),
    );
    const faultOutcomes: Record<string, number> = {};
    attacks[phase] = faultOutcomes;
    for (const answer of faultAnswers) {
      if (answer.body?.result) faultTasks.push(answer.body.result.task.id);
      const outcome = answer.body?.result ? "200 accepted" : `${answer.status} ${errorInfo(answer)?.reason}`;
      faultOutcomes[outcome] = (faultOutcomes[outcome] ?? 0) + 1;
    }
    expect(faultTasks).toHaveLength(40);
    // Every one of them ends (echoed, or FAILED for asking too long a wait), and no actor died for it.
    const faultsEnded = await waitFor(
      async () => {
        const states = await Promise.all(faultTasks.map((id) => redis.hget(inst.keys.task(0, id), "state")));
        const ended = states.every((state) => state === "TASK_STATE_COMPLETED" || state === "TASK_STATE_FAILED");
        return ended ? states : undefined;
      },
      60_000,
      "every task of the fault messages ended",
    );
    faultOutcomes.completed = faultsEnded.filter((state) => state === "TASK_STATE_COMPLETED").length;
    faultOutcomes.failed = faultsEnded.filter((state) => state === "TASK_STATE_FAILED").length;

    // Fill Redis: 1 MB messages, one after another, until the attacker's storage budget refuses them. Redis grows by
    // no more than the budget, one run's output (counted, never cut) and the allocator's overhead.
    phase = "fill redis";
    const filler = await inst.client();
    const memoryBefore = await usedMemory();
    let peakMemory = memoryBefore;
    attacks[phase] = await during(ATTACK_MS * 2, 1, async () => {
      const answer = await rpc(gateway.url, "SendMessage", { message: message("m".repeat(BIG)) }, { key: filler.key });
      peakMemory = Math.max(peakMemory, await usedMemory());
      return answer;
    });
    expect(attacks[phase]?.["503 CLIENT_STORAGE_LIMIT_EXCEEDED"] ?? 0).toBeGreaterThan(0);

    // Park interrupted tasks: past clients.maxInterruptedTasks a new task is refused. (One lane: the limit is checked
    // when a task is accepted, so tasks already queued when it is reached may still come to wait.)
    phase = "park interrupted";
    const parker = await inst.client();
    attacks[phase] = await during(ATTACK_MS, 1, () =>
      rpc(gateway.url, "SendMessage", { message: message("[input] wait for me") }, { key: parker.key }),
    );
    expect(attacks[phase]?.["503 INTERRUPTED_TASKS_LIMIT_EXCEEDED"] ?? 0).toBeGreaterThan(0);
    const interrupted = await redis.scard(inst.keys.clientInterrupted(inst.keys.shardOf(parker.id), parker.id));
    expect(interrupted).toBe(MAX_INTERRUPTED);

    // Crowd others out of the slots: blocking requests beyond the attacker's waiting share, slow runs beyond its running
    // share.
    phase = "slots";
    const second = await inst.client();
    attacks[phase] = await during(ATTACK_MS, 12, (lane) =>
      rpc(
        gateway.url,
        "SendMessage",
        { message: message("[sleep 8000] slow"), configuration: { returnImmediately: lane % 2 === 0 } },
        { key: second.key },
      ),
    );
    expect(attacks[phase]?.["503 CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED"] ?? 0).toBeGreaterThan(0);
    const running = await redis.scard(inst.keys.clientRunning(inst.keys.shardOf(second.id), second.id));
    expect(running).toBeLessThanOrEqual(2);

    // Stalled streams: readers that never read, 8 per task (the per-task limit) on 6 tasks that wait in the queue behind
    // the client's running share; each snapshot carries a 200 KB message. The gateway's memory stays bounded.
    phase = "stalled streams";
    const staller = await inst.client();
    const port = Number(new URL(gateway.url).port);
    const stalledTasks: string[] = [];
    for (let i = 0; i < 6; i++) {
      const answer = await rpc(
        gateway.url,
        "SendMessage",
        { message: message(`[sleep 9000] ${"s".repeat(200_000)}`), configuration: { returnImmediately: true } },
        { key: staller.key },
      );
      stalledTasks.push(answer.body.result.task.id);
    }
    const stalled = stalledTasks.flatMap((id) =>
      Array.from({ length: 8 }, () =>
        openRawStream(port, "SubscribeToTask", { id }, { key: staller.key, paused: true }),
      ),
    );
    await waitFor(async () => (await openStreams()) >= stalled.length, 20_000, "every stalled stream open");
    let gatewayRssPeak = rssMb(gateway.pid);
    const rssEnd = Date.now() + ATTACK_MS;
    while (Date.now() < rssEnd) {
      gatewayRssPeak = Math.max(gatewayRssPeak, rssMb(gateway.pid));
      await Bun.sleep(100);
    }
    attacks[phase] = { streams: stalled.length, open: await openStreams() };

    // Route around a proxy: a short Host header does not make /zz/metrics into /metrics.
    expect(await rawStatus("/zz/metrics", "a")).toBe(404);
    expect(await rawStatus("/zz/a2a/echo", "ab")).toBe(404);

    // Revocation: the stalling client's streams still open close at once, and its key is refused.
    phase = "revocation";
    const revokedAt = performance.now();
    expect((await inst.cli(["clients", "revoke", staller.id])).code).toBe(0);
    await waitFor(async () => (await openStreams()) === 0, 20_000, "the revoked client's streams closed");
    const closedInMs = Math.round(performance.now() - revokedAt);
    expect((await rpc(gateway.url, "GetTask", { id: ownTask }, { key: staller.key })).status).toBe(401);
    for (const s of stalled) s.socket.destroy();

    phase = "after";
    await Bun.sleep(500);
    await measuring.stop();

    // The victim was served throughout: every answer right, p99 within a small factor of its idle p99.
    const byPhase: Record<string, { n: number; p50: number; p99: number; max: number; failed: string[] }> = {};
    for (const sample of measuring.samples) {
      byPhase[sample.phase] ??= { n: 0, p50: 0, p99: 0, max: 0, failed: [] };
      const entry = byPhase[sample.phase]!;
      entry.n++;
      if (!sample.ok) entry.failed.push(sample.what);
    }
    for (const [name, entry] of Object.entries(byPhase)) {
      const times = measuring.samples.filter((s) => s.phase === name).map((s) => s.ms);
      entry.p50 = Math.round(percentile(times, 50) * 10) / 10;
      entry.p99 = Math.round(percentile(times, 99) * 10) / 10;
      entry.max = Math.round(Math.max(...times));
    }
    const idle = byPhase.idle;
    if (!idle) throw new Error("no idle samples");
    const worst = Math.max(...Object.values(byPhase).map((entry) => entry.p99));
    const factor = Math.round((worst / Math.max(idle.p99, 1)) * 10) / 10;
    const memoryGrowth = peakMemory - memoryBefore;
    // The victim's tasks accepted while Redis was being filled count too (its blocking echoes, every other request).
    const victimTasksWhileFilling = Math.ceil((byPhase["fill redis"]?.n ?? 0) / 2);
    const memoryBound = BUDGET + ONE_RUN_OUTPUT + OVERHEAD + victimTasksWhileFilling * VICTIM_TASK_BYTES;
    figures("hostile-tenants", {
      attacks,
      victim: byPhase,
      idleP99Ms: idle.p99,
      worstP99Ms: worst,
      p99Factor: factor,
      redisGrowthBytes: memoryGrowth,
      redisBoundBytes: memoryBound,
      interruptedParked: interrupted,
      gatewayRssMb: { start: gatewayRssStart, peak: gatewayRssPeak },
      revokedStreamsClosedMs: closedInMs,
      supervisorExits: work.lines.filter((line) => /"msg":"actor exited/.test(line)).length,
    });
    for (const entry of Object.values(byPhase)) expect(entry.failed).toEqual([]);
    // Generous for a busy 2-core machine (RELIABILITY.md has the measured factor): the point is "no freeze, no outage".
    expect(worst).toBeLessThan(Math.max(idle.p99 * 20, 2000));
    expect(memoryGrowth).toBeLessThanOrEqual(memoryBound);
    // Loose on purpose: the peak includes garbage not yet collected (each stream's snapshot is read, parsed and framed);
    // before the caps, 64 stalled readers took a gateway from 75 to 390 MB.
    expect(gatewayRssPeak - gatewayRssStart).toBeLessThan(256);
    // The revocation notice closes them at once; the safety check every 10 s would be later than this.
    expect(closedInMs).toBeLessThan(5000);

    // No process exited: the gateway and the supervisor serve on, no actor died, nothing is stored half way.
    expect(gateway.child.exitCode).toBeNull();
    expect(work.child.exitCode).toBeNull();
    expect(work.lines.filter((line) => /restart intensity exceeded|"msg":"actor exited/.test(line))).toEqual([]);
    let violations: string[] = [];
    await waitFor(
      async () => {
        ({ violations } = await checkInvariants(redis, inst.keys.prefix, { stuckAfterMs: 10_000 }));
        return violations.length === 0;
      },
      20_000,
      () => `no invariant violation; the last check found:\n${violations.join("\n")}`,
    );
  } finally {
    // On a failure too: the victim must not go on calling a gateway that afterAll stops.
    await measuring.stop();
  }
}, 180_000);
