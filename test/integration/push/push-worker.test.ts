// The push worker against real receivers on 127.0.0.1: what arrives, in which order, and what each outcome leaves
// in the outbox (retries, dead letters, disabled configs). Non-loopback cases resolve through an injected table and a
// connector that fails the test if it is ever called.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { PushConfigs } from "../../../src/journal/index.ts";
import type { PushWorker, PushWorkerDeps, ResolvedAddress } from "../../../src/push/index.ts";
import { verifyWebhook } from "../../../src/push/index.ts";
import { type JournalFixture, journalFixture, queuedDeliveries } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { PROFILE } from "../journal/helpers.ts";
import { type Answer, loopbackOnly, neverConnect, type Received, type Receiver, startReceiver } from "./receiver.ts";
import {
  CREDENTIALS,
  capturingLogger,
  deadLetters,
  pushSettings,
  pushWorker,
  revOf,
  runEvents,
  runSteps,
  SECRET,
  TOKEN,
  taskWithHooks,
  waitFor,
} from "./worker-fixture.ts";

let server: TestRedis;
let f: JournalFixture;
let connector = loopbackOnly();
const receivers: Receiver[] = [];
const workers: PushWorker[] = [];

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  const { violations } = connector;
  connector = loopbackOnly();
  expect(violations).toEqual([]);
});

/** A fresh key space per test, so dead letters and queues of one test never show in another. */
function fixture(): JournalFixture {
  f = journalFixture(server);
  return f;
}

async function receiver(answer?: (request: Received, index: number) => Answer): Promise<Receiver> {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

function worker(extra: Partial<PushWorkerDeps> = {}): PushWorker {
  const made = pushWorker(f, () => server.client(), receivers, { request: connector, ...extra });
  workers.push(made);
  return made;
}

const hookUrl = (hook: Receiver, path = "/hook") => `http://127.0.0.1:${hook.port}${path}`;
const bodies = (requests: Received[]) => requests.map((request) => JSON.parse(request.body) as unknown);
const events = (journal: { ev: string }[]) => journal.map((entry) => JSON.parse(entry.ev) as unknown);

describe("delivery", () => {
  test("every status and artifact event of a run arrives once, in order, signed, with the config's headers", async () => {
    fixture();
    const hook = await receiver();
    const { logger, lines } = capturingLogger();
    const task = await taskWithHooks(f, [hookUrl(hook, "/a2a/hook?tenant=t1")]);
    const pusher = worker({ logger });
    pusher.start();
    await runSteps(f, task, ["TASK_STATE_WORKING", "first part", "second part", "TASK_STATE_COMPLETED"]);
    const journal = await runEvents(f, task);
    expect(journal).toHaveLength(4);

    await waitFor("four deliveries", () => pusher.counters.delivered === 4);
    await Bun.sleep(300);
    expect(hook.requests).toHaveLength(4);
    expect(bodies(hook.requests)).toEqual(events(journal));
    for (const request of hook.requests) {
      expect(request).toMatchObject({ method: "POST", url: "/a2a/hook?tenant=t1" });
      expect(request.headers).toMatchObject({
        "content-type": "application/a2a+json",
        authorization: `Bearer ${CREDENTIALS}`,
        "x-a2a-notification-token": TOKEN,
      });
      expect(verifyWebhook(request.headers, request.body, [SECRET])).toMatchObject({ ok: true });
      const body = JSON.parse(request.body) as Record<string, unknown>;
      expect(Object.keys(body)).toHaveLength(1);
      expect(["statusUpdate", "artifactUpdate"]).toContain(Object.keys(body)[0] as string);
    }
    expect(new Set(hook.requests.map((request) => request.headers["webhook-id"])).size).toBe(4);
    expect(await f.redis.exists(f.keys.pushOutbox(0, task.taskId))).toBe(0);
    expect(await f.redis.zcard(f.keys.pushReady(0))).toBe(0);
    expect(pusher.counters).toEqual({ delivered: 4, retried: 0, dead: 0, disabled: 0, dropped: 0 });

    const log = lines.join("");
    expect(log).toContain(task.taskId);
    expect(log).not.toContain(CREDENTIALS);
    expect(log).not.toContain(TOKEN);
    expect(log).not.toContain(SECRET.slice(6));
  });

  test("a receiver that answers 503 for 3 s gets every event, in order, after retries with one webhook-id", async () => {
    fixture();
    let firstAt: number | undefined;
    const statuses: number[] = [];
    const hook = await receiver(() => {
      firstAt ??= Date.now();
      const status = Date.now() - firstAt < 3000 ? 503 : 200;
      statuses.push(status);
      return { status };
    });
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "the answer", "TASK_STATE_COMPLETED"]);
    const journal = await runEvents(f, task);
    const pusher = worker({
      config: pushSettings(f, receivers, { A2A_PUSH_MAX_ATTEMPTS: "12" }),
      backoffBaseMs: 200,
    });
    pusher.start();

    await waitFor("three delivered events", () => pusher.counters.delivered === 3, 10_000);
    const delivered = hook.requests.filter((_, index) => statuses[index] === 200);
    expect(bodies(delivered)).toEqual(events(journal));
    const refused = hook.requests.filter((_, index) => statuses[index] === 503);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(new Set(refused.map((request) => request.headers["webhook-id"]))).toEqual(
      new Set([delivered[0]?.headers["webhook-id"]]),
    );
    const revs = hook.requests.map(revOf);
    expect(revs).toEqual([...revs].sort((a, b) => a - b));
    expect(pusher.counters).toMatchObject({ delivered: 3, retried: refused.length, dead: 0 });
  });

  test("a receiver that keeps failing holds back its own config only: the task's other receiver gets every event", async () => {
    fixture();
    const down = await receiver(() => ({ status: 503 }));
    const up = await receiver();
    const task = await taskWithHooks(f, [hookUrl(down), hookUrl(up)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "the answer", "TASK_STATE_COMPLETED"]);
    const journal = await runEvents(f, task);
    // the failing config's retries wait a minute each: were the task's deliveries one queue, nothing would pass them
    const pusher = worker({ backoffBaseMs: 60_000, random: () => 0.99 });
    pusher.start();
    const settled = () => pusher.counters.delivered === 3 && pusher.counters.retried === 1;
    await waitFor("every event at the receiver that answers, and the other's first attempt", settled, 10_000);
    expect(bodies(up.requests)).toEqual(events(journal));
    // the other got its first event once, and waits for the retry: in order, nothing of it skipped
    expect(down.requests.map(revOf)).toEqual([2]);
    const waiting = await queuedDeliveries(f.redis, f.keys, task.taskId);
    expect(waiting.map((d) => [d.cfg, d.rev, d.attempts])).toEqual([
      ["c0", 2, 1],
      ["c0", 3, 0],
      ["c0", 4, 0],
    ]);
    expect(pusher.counters).toMatchObject({ dead: 0 });
  });

  test("deliveries an earlier version queued (one list per task) are delivered, each config's in journal order", async () => {
    fixture();
    const first = await receiver();
    const second = await receiver();
    const task = await taskWithHooks(f, [hookUrl(first), hookUrl(second)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "the answer", "TASK_STATE_COMPLETED"]);
    const journal = await runEvents(f, task);
    // as an earlier version left them: all the task's deliveries in one list, in journal order, due as the task id
    const queued = await queuedDeliveries(f.redis, f.keys, task.taskId);
    const inJournalOrder = [...queued].sort((a, b) => a.rev - b.rev || a.cfg.localeCompare(b.cfg));
    await f.redis.del(f.keys.pushOutbox(0, task.taskId), f.keys.pushReady(0));
    await f.redis.rpush(f.keys.legacyPushQueue(0, task.taskId), ...inJournalOrder.map((d) => JSON.stringify(d)));
    await f.redis.zadd(f.keys.pushReady(0), 0, task.taskId);
    const pusher = worker();
    pusher.start();
    await waitFor("every delivery", () => pusher.counters.delivered === 6, 10_000);
    expect(bodies(first.requests)).toEqual(events(journal));
    expect(bodies(second.requests)).toEqual(events(journal));
    expect(await f.redis.exists(f.keys.legacyPushQueue(0, task.taskId), f.keys.pushOutbox(0, task.taskId))).toBe(0);
  });

  test("a 429 with Retry-After is retried no sooner than the receiver asked", async () => {
    fixture();
    const at: number[] = [];
    const hook = await receiver((_, index) => {
      at.push(Date.now());
      return index === 0 ? { status: 429, headers: { "retry-after": "1" } } : { status: 200 };
    });
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING"]);
    // Without Retry-After the next attempt would wait 50 s (half of a 100 s ceiling): the test would time out.
    worker({ backoffBaseMs: 100_000 }).start();
    await waitFor("the retry", () => hook.requests.length >= 2, 4000);
    const gap = (at[1] ?? 0) - (at[0] ?? 0);
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(2500);
    expect(hook.requests[1]?.headers["webhook-id"]).toBe(hook.requests[0]?.headers["webhook-id"] as string);
  });

  test("a receiver that answers 400 gets exactly one attempt per event; each is dead-lettered with its reason", async () => {
    fixture();
    const hook = await receiver(() => ({ status: 400 }));
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const pusher = worker({ backoffBaseMs: 1 });
    expect(await pusher.tick()).toBe(2);
    await Bun.sleep(300);
    expect(hook.requests.map(revOf)).toEqual([2, 3]);
    const ids = hook.requests.map((request) => String(request.headers["webhook-id"]));
    expect(await deadLetters(f)).toEqual([
      { task: task.taskId, cfg: "c0", rev: "2", id: ids[0] as string, reason: "http status 400" },
      { task: task.taskId, cfg: "c0", rev: "3", id: ids[1] as string, reason: "http status 400" },
    ]);
    expect(pusher.counters).toMatchObject({ delivered: 0, retried: 0, dead: 2 });
    expect(await f.redis.exists(f.keys.pushOutbox(0, task.taskId))).toBe(0);
  });

  test("past push.maxAttempts a failing delivery is dead-lettered as given up, and the next event goes on", async () => {
    fixture();
    const hook = await receiver((request) => ({ status: request.body.includes("TASK_STATE_WORKING") ? 500 : 200 }));
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const pusher = worker({ config: pushSettings(f, receivers, { A2A_PUSH_MAX_ATTEMPTS: "3" }), backoffBaseMs: 20 });
    pusher.start();
    await waitFor("the next event", () => pusher.counters.delivered === 1);
    expect(hook.requests.map(revOf)).toEqual([2, 2, 2, 3]);
    expect((await deadLetters(f)).map((letter) => letter.reason)).toEqual([
      "gave up after 3 attempts: http status 500",
    ]);
    expect(pusher.counters).toMatchObject({ delivered: 1, retried: 2, dead: 1 });
  });

  test("a name that does not resolve yet is retried, then delivered", async () => {
    fixture();
    const hook = await receiver();
    let lookups = 0;
    const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
      lookups += 1;
      if (hostname !== "hook.test" || lookups === 1) throw Object.assign(new Error(hostname), { code: "ENOTFOUND" });
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const task = await taskWithHooks(f, [`http://hook.test:${hook.port}/hook`]);
    await runSteps(f, task, ["TASK_STATE_WORKING"]);
    const pusher = worker({
      config: pushSettings(f, receivers, { A2A_PUSH_ALLOW_HOSTS: `hook.test:${hook.port}` }),
      resolve,
    });
    pusher.start();
    await waitFor("the delivery", () => hook.requests.length >= 1);
    await waitFor("the settlement", () => pusher.counters.delivered === 1);
    expect(pusher.counters).toMatchObject({ retried: 1, delivered: 1, dead: 0 });
    expect(hook.requests[0]?.headers.host).toBe(`hook.test:${hook.port}`);
  });
});

describe("switched off", () => {
  test("with push.enabled false the worker sends nothing and leaves the outbox as it is", async () => {
    fixture();
    const hook = await receiver();
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING"]);
    const pusher = worker({ config: pushSettings(f, receivers, { A2A_PUSH_ENABLED: "false" }) });
    pusher.start();
    expect(await pusher.tick()).toBe(0);
    await Bun.sleep(300);
    expect(hook.requests).toHaveLength(0);
    expect(await queuedDeliveries(f.redis, f.keys, task.taskId)).toHaveLength(1);
  });
});

describe("configs that end", () => {
  test("410 disables the config: its queued and later events are not sent, and it is gone", async () => {
    fixture();
    const gone = await receiver(() => ({ status: 410 }));
    const kept = await receiver();
    const task = await taskWithHooks(f, [hookUrl(gone), hookUrl(kept)]);
    const run = await runSteps(f, task, ["TASK_STATE_WORKING", "a part"]);
    const pusher = worker();
    await pusher.tick();
    expect(gone.requests.map(revOf)).toEqual([2]);
    expect(await f.redis.hexists(f.keys.pushConfigs(0, task.taskId), "c0")).toBe(0);
    const [letter] = await deadLetters(f);
    expect(letter).toMatchObject({ task: task.taskId, cfg: "c0", rev: "2", reason: "http status 410 gone" });

    await run.steps("TASK_STATE_COMPLETED");
    await pusher.tick();
    expect(gone.requests).toHaveLength(1);
    expect(bodies(kept.requests)).toEqual(events(await runEvents(f, task)));
    expect(pusher.counters).toEqual({ delivered: 3, retried: 0, dead: 0, disabled: 1, dropped: 1 });
  });

  test("a config deleted while its events wait is dropped silently", async () => {
    fixture();
    const hook = await receiver();
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    await new PushConfigs(f.redis, f.keys).delete(task.clientId, PROFILE, task.taskId, "c0");
    const pusher = worker();
    await pusher.tick();
    expect(hook.requests).toHaveLength(0);
    expect(await deadLetters(f)).toEqual([]);
    expect(pusher.counters).toMatchObject({ dropped: 2, delivered: 0, dead: 0 });
    expect(await f.redis.exists(f.keys.pushOutbox(0, task.taskId))).toBe(0);
  });

  test("a refused address is dead-lettered with the policy's reason and nothing is sent", async () => {
    fixture();
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
      asked.push(hostname);
      return [{ address: "10.0.0.1", family: 4 }];
    };
    const never = neverConnect();
    const task = await taskWithHooks(f, ["https://internal.example/hook", "http://169.254.169.254/latest/meta-data"]);
    await runSteps(f, task, ["TASK_STATE_WORKING"]);
    const pusher = worker({ resolve, request: never });
    await pusher.tick();
    expect(never.calls).toEqual([]);
    expect(asked).toEqual(["internal.example"]);
    // (each config has its queue: the two are settled in either order)
    const letters = (await deadLetters(f)).map(({ cfg, reason }) => ({ cfg, reason }));
    expect(letters.sort((a, b) => String(a.cfg).localeCompare(String(b.cfg)))).toEqual([
      { cfg: "c0", reason: "private address 10.0.0.1" },
      { cfg: "c1", reason: "metadata address 169.254.169.254" },
    ]);
    expect(pusher.counters).toMatchObject({ dead: 2, delivered: 0, retried: 0 });
  });
});

describe("the allow-list names ports", () => {
  test("with 127.0.0.1:<receiver port> allow-listed, a webhook to the Redis port of 127.0.0.1 is refused at delivery", async () => {
    fixture();
    const hook = await receiver();
    const redisHook = `http://127.0.0.1:${server.port}/`;
    const task = await taskWithHooks(f, [redisHook, hookUrl(hook)]);
    await runSteps(f, task, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const pusher = worker();
    await pusher.tick();
    // Not a single connection towards Redis: each event of config c0 is dead-lettered by the address policy.
    expect(connector.calls.map((call) => call.url.port)).toEqual([String(hook.port), String(hook.port)]);
    expect((await deadLetters(f)).map(({ cfg, reason }) => ({ cfg, reason }))).toEqual([
      { cfg: "c0", reason: "loopback address 127.0.0.1" },
      { cfg: "c0", reason: "loopback address 127.0.0.1" },
    ]);
    expect(bodies(hook.requests)).toEqual(events(await runEvents(f, task)));
  });
});
