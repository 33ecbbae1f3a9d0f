// Scenario 9: webhook receivers that fail (5xx at first, 5xx always, 410, too slow, reset, a redirect) under a few
// hundred echo tasks, with actors SIGKILLed while deliveries are in flight. Push never holds a task back; each
// receiver gets what the documented rules promise; nothing is left pending; no webhook comes from the gateway.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { isRunning, waitFor } from "../integration/actors/harness.ts";
import { errorInfo, message, rpc } from "../integration/gateway/harness.ts";
import { ECHO_PROFILE, type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { freePort, startRedis, type TestRedis } from "../support/redis.ts";
import { checkInvariants, terminalEvents } from "./invariants.ts";
import { figures, load, pool, scaled, states } from "./load.ts";
import { ENDPOINTS, type Endpoint, type Receivers, type Request, startReceivers } from "./push-receivers.ts";

const SECRETS = ["whsec_cHVzaC1yZWNlaXZlcnMtZmF1bHQtc2NlbmFyaW8=", "plain-secret-during-rotation"];
const CREDENTIALS = "cred-receivers-5e1f";
const MAX_ATTEMPTS = 3;
const TIMEOUT_SECONDS = 1;
const SLOW_MS = TIMEOUT_SECONDS * 1000 + 2000;
// Retries within 0.1 s, 0.2 s, …: the default (1 s, 2 s, …) would spread each failing config's attempts over seconds.
const RETRY_BASE_MS = 100;
/**
 * The endpoints of tasks with two configs (their notifications wait behind each other's, over up to ten events): slow's
 * 3 × timeout per event stays out of them, so that no task's notifications take much longer than a claim's lease.
 */
const PAIRED: readonly Endpoint[] = ENDPOINTS.filter((endpoint) => endpoint !== "slow");
const STUCK_AFTER_MS = 2000 + 1000 + 2000; // lease + reclaim interval + slack for a loaded machine

let dir: string | undefined;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let work: Running;
let key: string;
let hooks: Receivers;
let metricsUrl: string;

beforeAll(async () => {
  // The journal is kept an hour (not the default minute), so each config's expected events can be read at the end.
  dir = mkdtempSync(join(tmpdir(), "a2a-push-faults-"));
  const config = join(dir, "config.json");
  // The receivers listen first: the allow-list names their port, and no other port of 127.0.0.1.
  hooks = await startReceivers({
    secrets: SECRETS,
    slowMs: SLOW_MS,
    gatewayPid: () => gateway.pid,
    supervisorPid: () => work.pid,
  });
  const push = {
    allowHosts: [`127.0.0.1:${new URL(hooks.base).port}`],
    maxAttempts: MAX_ATTEMPTS,
    timeoutSeconds: TIMEOUT_SECONDS,
    retryBaseMs: RETRY_BASE_MS,
    signingSecrets: SECRETS,
  };
  writeFileSync(config, JSON.stringify({ profiles: [{ ...ECHO_PROFILE, journalRetentionSeconds: 3600 }], push }));
  server = await startRedis();
  redis = server.client();
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_CONFIG: config,
      A2A_WORKER_RESTART_INTENSITY: "100000",
      A2A_WORKER_METRICS_PORT: String(metricsPort),
      A2A_SERVER_MAX_WAITING_REQUESTS: "32",
      A2A_CLIENTS_MAX_WAITING_REQUESTS: "1000",
    },
  });
  [gateway, work] = await Promise.all([inst.gateway(), inst.work("bun", 3)]);
  ({ key } = await inst.client());
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await hooks?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** One push config of a task, and the revision after which its events were enqueued. */
interface Hook {
  taskId: string;
  configId: string;
  endpoint: Endpoint;
  token: string;
  afterRev: number;
}

interface Planned {
  taskId: string;
  answer: string;
  hooks: Hook[];
}

/** Config ids use the punctuation a client may send (they are part of the webhook-id and of the outbox's JSON). */
function pushConfig(endpoint: Endpoint, configId: string, token: string) {
  return {
    id: configId,
    url: `${hooks.base}/${endpoint}?cfg=${encodeURIComponent(configId)}`,
    token,
    authentication: { scheme: "Bearer", credentials: CREDENTIALS },
  };
}

async function call(method: string, params: unknown) {
  const answer = await rpc(gateway.url, method, params, { key });
  if (!answer.body?.result) throw new Error(`${method}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.result;
}

/**
 * Task i: one inline config, on endpoint i % 7; every third task instead stops in INPUT_REQUIRED (its inline config on
 * one of PAIRED), gets a second config on another of PAIRED (CreateTaskPushNotificationConfig) and is resumed, so its
 * two configs see different event ranges, and each paired endpoint is paired with each other one.
 */
async function send(i: number): Promise<Planned> {
  const j = Math.floor(i / 3);
  const inline = (i % 3 === 0 ? PAIRED[j % PAIRED.length] : ENDPOINTS[i % ENDPOINTS.length]) as Endpoint;
  const inlineHook = { configId: `in/${inline}{${i}}#a`, endpoint: inline, token: `tok-${i}-a`, afterRev: 1 };
  const taskPushNotificationConfig = pushConfig(inline, inlineHook.configId, inlineHook.token);
  if (i % 3 !== 0) {
    const result = await call("SendMessage", {
      message: message(`run ${i}`),
      configuration: { returnImmediately: true, taskPushNotificationConfig },
    });
    return { taskId: result.task.id, answer: `run ${i}`, hooks: [{ ...inlineHook, taskId: result.task.id }] };
  }
  const first = await call("SendMessage", {
    message: message(`[input] run ${i}`),
    configuration: { taskPushNotificationConfig },
  });
  const taskId: string = first.task.id;
  expect(first.task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  const afterRev = Number(await redis.hget(inst.keys.task(0, taskId), "rev"));
  const second = PAIRED[(PAIRED.indexOf(inline) + 1 + (Math.floor(j / PAIRED.length) % 5)) % PAIRED.length] as Endpoint;
  const created = { configId: `cr:${second}/${i}?b`, endpoint: second, token: `tok-${i}-b`, afterRev };
  await call("CreateTaskPushNotificationConfig", { ...pushConfig(second, created.configId, created.token), taskId });
  await call("SendMessage", { message: message(`reply ${i}`, { taskId }), configuration: { returnImmediately: true } });
  return {
    taskId,
    answer: `reply ${i}`,
    hooks: [
      { ...inlineHook, taskId },
      { ...created, taskId },
    ],
  };
}

/** Actor pids from the heartbeats (mode "consume"), alive ones only. */
async function actorPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const id of await redis.zrange(inst.keys.workers(), 0, -1)) {
    const [mode, pid] = await redis.hmget(inst.keys.worker(id), "mode", "pid");
    if (mode === "consume" && pid && isRunning(Number(pid))) pids.push(Number(pid));
  }
  return [...new Set(pids)];
}

async function journal(taskId: string): Promise<{ rev: number; ev: string }[]> {
  const rows = await redis.xrange(inst.keys.journal(0, taskId), "-", "+");
  return rows.map(([, fields]) => ({
    rev: Number(fields[fields.indexOf("rev") + 1]),
    ev: fields[fields.indexOf("ev") + 1] ?? "",
  }));
}

async function deadLetters(): Promise<Record<string, string>[]> {
  const rows = await redis.xrange(inst.keys.pushDead(0), "-", "+");
  return rows.map(([, fields]) => {
    const out: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
    return out;
  });
}

/** Consecutive repeats of one webhook-id collapsed: the order in which distinct notifications arrived. */
function arrivalOrder(requests: readonly Request[]): string[] {
  return requests.map((r) => r.webhookId).filter((id, index, all) => index === 0 || all[index - 1] !== id);
}

/** The supervisor's a2a_push_deliveries_total by outcome (its actors' counters, summed). */
async function pushMetrics(): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const [, outcome, value] of text.matchAll(/^a2a_push_deliveries_total\{outcome="(\w+)"\} (\d+)$/gm)) {
    out[outcome as string] = Number(value);
  }
  return out;
}

function count<T>(items: readonly T[], keyOf: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[keyOf(item)] = (out[keyOf(item)] ?? 0) + 1;
  return out;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The dead-letter reason each failing endpoint's notifications must end with. The reason is the last attempt's: a
 * worker held up past the timeout on a loaded machine may record a timeout for a receiver that did answer, which is
 * still a notification given up after push.maxAttempts.
 */
function reasons(): Record<Exclude<Endpoint, "ok" | "flaky">, RegExp> {
  const timeout = `timeout after ${TIMEOUT_SECONDS * 1000} ms`;
  const givenUp = `gave up after ${MAX_ATTEMPTS} attempts: `;
  return {
    down: new RegExp(`^${givenUp}(http status 500|${timeout})$`),
    slow: new RegExp(`^${givenUp}${timeout}$`),
    reset: new RegExp(`^${givenUp}(network error \\S+|${timeout})$`),
    redirect: new RegExp(`^redirect 302 to ${escaped(hooks.base)}/target not followed$`),
    gone: /^http status 410 gone$/,
  };
}

/** What the checks of one config counted. */
interface Tally {
  requests: number;
  delivered: number;
  dead: number;
  /** Repeats of a notification after its receiver took it (2xx): a worker died before recording the answer. */
  duplicates: number;
  /** Attempts beyond those the rules call for (a worker died before recording the outcome). */
  extraAttempts: number;
}

/**
 * Checks what one config's receiver got against its events in the journal (those after `hook.afterRev`) and the dead
 * letters. Every request is signed, carries the config's token and credentials, and holds its event's body.
 */
async function checkHook(
  hook: Hook,
  events: readonly { rev: number; ev: string }[],
  byId: ReadonlyMap<string, Request[]>,
  deadById: ReadonlyMap<string, Record<string, string>>,
): Promise<Tally> {
  const mine = events.filter((e) => e.rev > hook.afterRev);
  const ids = mine.map((e) => `${hook.taskId}.${e.rev}.${hook.configId}`);
  const got = ids.flatMap((id) => byId.get(id) ?? []);
  const deadOf = ids.map((id) => deadById.get(id)?.reason ?? "-").join(" | ");
  const answers = got.map((r) => r.status ?? "none").join(",");
  const where = `${hook.endpoint} config ${hook.configId} of task ${hook.taskId}: answers ${answers}; dead ${deadOf}`;
  expect(mine.at(-1)?.ev, where).toContain("TASK_STATE_COMPLETED");
  for (const request of got) {
    expect(request.endpoint, where).toBe(hook.endpoint);
    expect(request.verified, where).toBe(true);
    expect(request.token, where).toBe(hook.token);
    expect(request.authorization, where).toBe(`Bearer ${CREDENTIALS}`);
    const rev = Number(request.webhookId.slice(hook.taskId.length + 1).split(".")[0]);
    expect(JSON.parse(request.body), where).toEqual(JSON.parse(mine.find((e) => e.rev === rev)?.ev ?? "null"));
  }
  const perId = ids.map((id) => (byId.get(id) ?? []).length);
  const tally: Tally = { requests: got.length, delivered: 0, dead: 0, duplicates: 0, extraAttempts: 0 };
  if (hook.endpoint === "ok" || hook.endpoint === "flaky") {
    // Every event, in journal order, taken once (flaky: after a 503); a repeat only ever repeats the same webhook-id.
    expect(arrivalOrder(got), where).toEqual(ids);
    const taken = got.filter((r) => r.status === 200);
    expect(arrivalOrder(taken), where).toEqual(ids);
    const needed = hook.endpoint === "ok" ? 1 : 2;
    for (const n of perId) expect(n, where).toBeGreaterThanOrEqual(needed);
    for (const id of ids) expect(deadById.has(id), where).toBe(false);
    return {
      ...tally,
      delivered: ids.length,
      duplicates: taken.length - ids.length,
      extraAttempts: got.length - ids.length * needed,
    };
  }
  const reason = reasons()[hook.endpoint];
  if (hook.endpoint === "gone") {
    // The first notification's 410 disabled the config: nothing later was sent, and the config is deleted.
    expect(arrivalOrder(got), where).toEqual(ids.slice(0, 1));
    expect(deadById.get(ids[0] ?? "")?.reason ?? "", where).toMatch(reason);
    expect(await redis.hexists(inst.keys.pushConfigs(0, hook.taskId), hook.configId), where).toBe(0);
    return { ...tally, dead: 1, extraAttempts: got.length - 1 };
  }
  // Every event attempted in order and given up: after push.maxAttempts, or at the first answer for the redirect.
  expect(arrivalOrder(got), where).toEqual(ids);
  const needed = hook.endpoint === "redirect" ? 1 : MAX_ATTEMPTS;
  for (const n of perId) expect(n, where).toBeGreaterThanOrEqual(needed);
  for (const id of ids) expect(deadById.get(id)?.reason ?? "", where).toMatch(reason);
  return { ...tally, dead: ids.length, extraAttempts: got.length - ids.length * needed };
}

/**
 * Sends the load while actors are SIGKILLed, each while it waits for /slow's answer (an attempt in flight), never the
 * last live one; waits until every task is terminal and the outbox is empty.
 */
async function runLoad(total: number, maxKills: number) {
  const started = Date.now();
  let kills = 0;
  let stop = false;
  const killer = (async () => {
    await Bun.sleep(500);
    while (!stop && kills < maxKills) {
      const victim = hooks.sender("slow", (TIMEOUT_SECONDS * 1000) / 2);
      const pids = victim === undefined ? [] : await actorPids();
      if (victim === undefined || pids.length < 2 || !pids.includes(victim)) {
        await Bun.sleep(100);
        continue;
      }
      process.kill(victim, "SIGKILL");
      kills += 1;
      // Close together in the quick set: each kill holds its tasks' notifications for the claim's lease (17 s).
      await Bun.sleep(load(1000, 2500));
    }
  })();
  try {
    const planned = await pool(total, 12, send);
    const taskKeys = planned.map((p) => inst.keys.task(0, p.taskId));
    let found: (string | null)[] = [];
    await waitFor(
      async () => {
        found = await states(redis, taskKeys);
        return found.every((s) => s === "TASK_STATE_COMPLETED" || s === "TASK_STATE_FAILED");
      },
      scaled(30_000),
      () => `every task terminal; ${JSON.stringify(count(found, String))}`,
    );
    const completedMs = Date.now() - started;
    let pending = 0;
    await waitFor(
      async () => {
        pending = await redis.zcard(inst.keys.pushReady(0));
        return pending === 0;
      },
      scaled(60_000),
      () => `the outbox drained; ${pending} queues (a task's to one config) still have notifications`,
    );
    return { planned, found, kills, completedMs, drainedMs: Date.now() - started };
  } finally {
    stop = true;
    await killer;
  }
}

test(
  "receivers that fail under load: tasks complete, each receiver gets what the rules promise, nothing left pending",
  async () => {
    const total = load(280, 2800);
    const { planned, found, kills, completedMs, drainedMs } = await runLoad(total, load(2, 6));

    // Push never held a task back: each one completed with its echo, finished once.
    expect(count(found, String)).toEqual({ TASK_STATE_COMPLETED: total });
    for (const p of planned) {
      const arts = JSON.parse((await redis.hget(inst.keys.task(0, p.taskId), "arts")) ?? "[]") as {
        parts: { text?: string }[];
      }[];
      expect(arts.flatMap((a) => a.parts.map((part) => part.text ?? "")).join("")).toBe(p.answer);
      expect(await terminalEvents(redis, inst.keys.journal(0, p.taskId))).toBe(1);
    }

    const byId = new Map<string, Request[]>();
    for (const request of hooks.requests) {
      const same = byId.get(request.webhookId) ?? [];
      same.push(request);
      byId.set(request.webhookId, same);
    }
    const dead = await deadLetters();
    const deadById = new Map(dead.map((entry) => [entry.id ?? "", entry]));
    expect(deadById.size).toBe(dead.length); // one dead letter per notification, never two
    const sum: Tally = { requests: 0, delivered: 0, dead: 0, duplicates: 0, extraAttempts: 0 };
    for (const p of planned) {
      const events = await journal(p.taskId);
      for (const hook of p.hooks) {
        const tally = await checkHook(hook, events, byId, deadById);
        for (const name of Object.keys(sum) as (keyof Tally)[]) sum[name] += tally[name];
      }
    }
    // Nothing arrived that no config was owed, nothing else was given up, the redirect was never followed.
    expect(sum.requests).toBe(hooks.requests.length);
    expect(dead).toHaveLength(sum.dead);
    expect(hooks.requests.filter((r) => r.endpoint === "target")).toEqual([]);
    expect(kills).toBeGreaterThan(0);

    // No webhook came from the gateway; the sampled requests came from the actors (so the lookup does find senders).
    expect(hooks.fromGateway()).toBe(0);
    const sampled = hooks.requests.filter((r) => r.owner !== "unchecked");
    const owners = count(sampled, (r) => r.owner);
    expect(sampled.length).toBeGreaterThanOrEqual(20);
    expect(owners.gateway ?? 0).toBe(0);
    expect(owners.worker ?? 0).toBeGreaterThanOrEqual(sampled.length * 0.9);

    const status = JSON.parse((await inst.cli(["status", "--json", "--minimum-workers", "0"])).stdout);
    expect(status).toMatchObject({ pushPending: 0, pushPendingTasks: 0, pushDeadLetters: dead.length });
    const report = await checkInvariants(redis, inst.keys.prefix, {
      stuckAfterMs: STUCK_AFTER_MS,
      requireSettled: true,
      liveLeasesAllowed: 0,
    });
    expect(report.violations).toEqual([]);

    // The same counts where an operator reads them: the actors' logs and the supervisor's metrics. Both are written
    // after the dead letter, so an actor killed in between (or before its next metrics snapshot) misses a few.
    await Bun.sleep(1500);
    const metrics = await pushMetrics();
    const logged = count(
      work.lines.filter((line) =>
        /"msg":"push (notification dead-lettered|config disabled by its receiver)"/.test(line),
      ),
      (line) => (line.includes("disabled") ? "disabled" : "dead"),
    );
    for (const counted of [metrics, logged]) {
      expect((counted.dead ?? 0) + (counted.disabled ?? 0)).toBeLessThanOrEqual(dead.length);
      expect((counted.dead ?? 0) + (counted.disabled ?? 0)).toBeGreaterThan(0);
    }

    const notifications = new Set(hooks.requests.map((r) => r.webhookId)).size;
    figures("push-receivers", {
      tasks: total,
      configs: count(
        planned.flatMap((p) => p.hooks),
        (h) => h.endpoint,
      ),
      kills,
      attempts: hooks.requests.length,
      attemptsByEndpoint: count(hooks.requests, (r) => r.endpoint),
      notifications,
      delivered: sum.delivered,
      retried: hooks.requests.length - notifications,
      givenUp: count(dead, (d) => (d.reason ?? "").replace(/127\.0\.0\.1:\d+/, "127.0.0.1:PORT")),
      duplicates: sum.duplicates,
      extraAttempts: sum.extraAttempts,
      owners,
      fromGateway: hooks.fromGateway(),
      gatewayTableReads: hooks.gatewayReads(),
      metrics,
      logged,
      completedSeconds: Math.round(completedMs / 100) / 10,
      drainedSeconds: Math.round(drainedMs / 100) / 10,
    });
  },
  scaled(100_000),
);

test("regression: a config id with a quote or a backslash is refused (it broke the outbox's JSON and stalled its task's notifications)", async () => {
  const plain = await call("SendMessage", { message: message("[input] ids"), configuration: {} });
  const taskId: string = plain.task.id;
  for (const id of ['q"uote', "back\\slash"]) {
    const created = await rpc(
      gateway.url,
      "CreateTaskPushNotificationConfig",
      { ...pushConfig("ok", id, "tok"), taskId },
      { key },
    );
    expect(created.body.error?.code).toBe(-32602);
    expect(errorInfo(created).reason).toBe("INVALID_PUSH_NOTIFICATION_CONFIG");
    const inline = await rpc(
      gateway.url,
      "SendMessage",
      {
        message: message("inline"),
        configuration: { returnImmediately: true, taskPushNotificationConfig: pushConfig("ok", id, "tok") },
      },
      { key },
    );
    expect(inline.body.error?.code).toBe(-32602);
  }
  expect(await redis.hlen(inst.keys.pushConfigs(0, taskId))).toBe(0);
});
