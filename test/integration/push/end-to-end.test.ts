// Push notifications end to end: a real redis-server, the gateway and the supervisor (`a2a-runtime work`) as child
// processes, an `echo` run, and loopback receivers. Every event arrives once, in order, signed, with the configured
// headers; a worker killed mid-delivery loses nothing; and every webhook connection comes from an actor process,
// never from the gateway, whose loaded modules hold no delivery code.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TaskPushNotificationConfig } from "../../../src/protocol/index.ts";
import { verifyWebhook } from "../../../src/push/index.ts";
import { userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { type RpcAnswer, rpc } from "../gateway/harness.ts";
import {
  actorPids,
  type Child,
  CREDENTIALS,
  connectionsOf,
  type Delivered,
  type E2eInstallation,
  e2eInstallation,
  type GatewayProcess,
  journalEvents,
  type ObservingReceiver,
  observingReceiver,
  removeInstallation,
  SECRET,
  startChild,
  startGatewayProcess,
  startWork,
  statusJson,
  stopChildren,
  TOKEN,
  waitFor,
  waitForActors,
} from "./e2e-harness.ts";

let server: TestRedis;
let inst: E2eInstallation;
let gateway: GatewayProcess;
let work: Child;
const receivers: ObservingReceiver[] = [];
/** Receivers started before the installation, so that its allow-list names their ports; each test takes its own. */
const pool: ObservingReceiver[] = [];

beforeAll(async () => {
  server = await startRedis();
  pool.push(...(await Promise.all(Array.from({ length: 6 }, () => observingReceiver()))));
  receivers.push(...pool);
  inst = await e2eInstallation(server, pool);
  work = startWork(inst, 1);
  gateway = await startGatewayProcess(inst);
  await waitForActors(inst.f);
}, 30_000);

afterAll(async () => {
  await stopChildren();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  removeInstallation(inst);
  await server.stop();
});

/** A receiver of the pool, answering with `answer` (200 by default). */
function receiver(answer?: Parameters<ObservingReceiver["answerWith"]>[0]): ObservingReceiver {
  const next = pool.shift();
  if (next === undefined) throw new Error("the receiver pool is empty: start more in beforeAll");
  if (answer) next.answerWith(answer);
  return next;
}

function send(params: Record<string, unknown>): Promise<RpcAnswer> {
  return rpc(gateway.url, "SendMessage", params, { key: inst.key });
}

function inlineConfig(url: string): TaskPushNotificationConfig {
  return { url, token: TOKEN, authentication: { scheme: "Bearer", credentials: CREDENTIALS } };
}

/** Every request is signed, carries the config's headers, and came from an actor process (not the gateway). */
function expectSignedFromActors(requests: Delivered[], actors: readonly number[]): void {
  for (const request of requests) {
    expect(verifyWebhook(request.headers, request.body, [SECRET], 300)).toMatchObject({ ok: true });
    expect(request.headers["content-type"]).toBe("application/a2a+json");
    expect(request.headers.authorization).toBe(`Bearer ${CREDENTIALS}`);
    expect(request.headers["x-a2a-notification-token"]).toBe(TOKEN);
    expect(request.ownerPid).toBeDefined();
    expect(request.ownerPid).not.toBe(gateway.pid);
    expect(actors).toContain(request.ownerPid as number);
  }
}

test("the gateway process has loaded no delivery code and no actor code", () => {
  expect(gateway.modules).toContain("gateway/start-gateway.ts");
  expect(gateway.modules).toContain("gateway/operations/push-configs.ts");
  expect(gateway.modules.filter((path) => path.startsWith("push/") || path.startsWith("actors/"))).toEqual([]);
});

describe("delivery through the workers", () => {
  test("every status and artifact event of an echo run arrives once, in order, signed, with the config's headers", async () => {
    const hook = receiver();
    const actors = await actorPids(inst.f);
    const answer = await send({
      message: { messageId: "e2e-1", role: "ROLE_USER", parts: [{ text: "[chunks 5] one two three four five" }] },
      configuration: { taskPushNotificationConfig: inlineConfig(`${hook.url}?run=1`) },
    });
    const task = answer.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    const events = await journalEvents(inst.f, task.id);
    // five deltas; those asked while a write is in flight share one update
    expect(events.filter((e) => e.ev.includes('"artifactUpdate"')).length).toBeGreaterThanOrEqual(1);
    await waitFor(async () => hook.requests.length >= events.length, 10_000, "every event at the receiver");
    await Bun.sleep(300); // nothing more arrives
    expect(hook.requests.map((r) => JSON.parse(r.body))).toEqual(events.map((e) => JSON.parse(e.ev)));
    // The inline config's id is the task id; one webhook-id per event, in journal order.
    expect(hook.requests.map((r) => r.headers["webhook-id"])).toEqual(
      events.map((e) => `${task.id}.${e.rev}.${task.id}`),
    );
    expect(hook.requests.every((r) => r.url === "/hook?run=1")).toBe(true);
    const states = hook.requests.flatMap((r) => JSON.parse(r.body).statusUpdate?.status.state ?? []);
    expect(states[0]).toBe("TASK_STATE_WORKING");
    expect(states.at(-1)).toBe("TASK_STATE_COMPLETED");
    expectSignedFromActors(hook.requests, actors);
  }, 20_000);

  test("a config created on an interrupted task gets the follow-up's events; a 400 receiver's are dead letters", async () => {
    const hook = receiver();
    const refuser = receiver(() => ({ status: 400 }));
    const gone = receiver(() => ({ status: 410 }));
    const first = await send({ message: { messageId: "e2e-2a", role: "ROLE_USER", parts: [{ text: "[input] ask" }] } });
    const task = first.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const afterRev = Number(await inst.f.redis.hget(inst.f.keys.task(0, task.id), "rev"));
    for (const [id, url] of [
      ["ok", hook.url],
      ["bad", refuser.url],
      ["gone", gone.url],
    ]) {
      const created = await rpc(
        gateway.url,
        "CreateTaskPushNotificationConfig",
        { ...inlineConfig(url as string), taskId: task.id, id },
        { key: inst.key },
      );
      expect(created.body.result).toEqual({
        id,
        taskId: task.id,
        url,
        token: TOKEN,
        authentication: { scheme: "Bearer" },
      });
    }
    const followUp = await send({
      message: { messageId: "e2e-2b", role: "ROLE_USER", taskId: task.id, parts: [{ text: "[chunks 3] and more" }] },
    });
    expect(followUp.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    const events = await journalEvents(inst.f, task.id, afterRev);
    await waitFor(async () => hook.requests.length >= events.length, 10_000, "the follow-up's events");
    await waitFor(async () => refuser.requests.length >= events.length, 10_000, "one attempt per event at the 400");
    await Bun.sleep(300);
    expect(hook.requests.map((r) => JSON.parse(r.body))).toEqual(events.map((e) => JSON.parse(e.ev)));
    expect(refuser.requests.map((r) => r.headers["webhook-id"])).toEqual(events.map((e) => `${task.id}.${e.rev}.bad`));
    expectSignedFromActors([...hook.requests, ...refuser.requests, ...gone.requests], await actorPids(inst.f));
    // 410 disabled its config at the first event: nothing more was sent to it, and it is gone from the task.
    expect(gone.requests.map((r) => r.headers["webhook-id"])).toEqual([`${task.id}.${events[0]?.rev}.gone`]);
    const listed = await rpc(gateway.url, "ListTaskPushNotificationConfigs", { taskId: task.id }, { key: inst.key });
    expect(listed.body.result.configs.map((c: { id: string }) => c.id)).toEqual(["bad", "ok"]);
    const status = await statusJson(inst);
    expect(status).toMatchObject({ pushDeadLetters: events.length + 1, pushPending: 0, pushPendingTasks: 0 });
  }, 20_000);

  test("a receiver that answers 503 for its first 5 s gets every event, in order, after retries", async () => {
    let firstAt: number | undefined;
    const hook = receiver(() => {
      firstAt ??= Date.now();
      return { status: Date.now() - firstAt < 5000 ? 503 : 200 };
    });
    const answer = await send({
      message: { messageId: "e2e-503", role: "ROLE_USER", parts: [{ text: "[chunks 3] retried until taken" }] },
      configuration: { taskPushNotificationConfig: inlineConfig(hook.url) },
    });
    const task = answer.body.result.task;
    const events = await journalEvents(inst.f, task.id);
    const accepted = () => hook.requests.filter((r) => r.status === 200);
    await waitFor(async () => accepted().length >= events.length, 30_000, "every event after the 503s");
    await Bun.sleep(300);
    expect(hook.requests.filter((r) => r.status === 503).length).toBeGreaterThanOrEqual(2);
    expect(accepted().map((r) => JSON.parse(r.body))).toEqual(events.map((e) => JSON.parse(e.ev)));
    // The retries of the first event carried its webhook-id; no later event was sent before it was taken.
    const ids = hook.requests.map((r) => String(r.headers["webhook-id"]));
    const firstId = `${task.id}.${events[0]?.rev}.${task.id}`;
    expect(ids.slice(0, ids.lastIndexOf(firstId) + 1).every((id) => id === firstId)).toBe(true);
    expectSignedFromActors(hook.requests, await actorPids(inst.f));
  }, 40_000);
});

describe("the sweep", () => {
  test("a `sweep --once` tick runs the task and then delivers its events, from the sweep process", async () => {
    const hook = await observingReceiver();
    receivers.push(hook);
    const own = await e2eInstallation(server, [hook]);
    try {
      own.env.A2A_LOG_LEVEL = "info";
      await own.f.ledger.beat(0, 60); // a recent tick, so that the journal accepts the task
      const { taskId } = await own.f.journal.accept({
        clientId: own.clientId,
        profile: "echo",
        profileQuota: 0,
        message: userMessage("[chunks 2] swept then pushed"),
        pushConfig: inlineConfig(hook.url),
      });
      const sweep = startChild(own, new URL("../../../src/cli.ts", import.meta.url).pathname, ["sweep", "--once"]);
      await sweep.exited;
      expect(sweep.child.exitCode).toBe(0);
      const events = await journalEvents(own.f, taskId);
      expect(events.at(-1)?.ev).toContain("TASK_STATE_COMPLETED");
      // The tick returned only after its attempts: everything has arrived already.
      expect(hook.requests.map((r) => JSON.parse(r.body))).toEqual(events.map((e) => JSON.parse(e.ev)));
      expectSignedFromActors(hook.requests, [sweep.pid]);
      const tick = sweep.lines.find((line) => line.includes('"sweep tick"'));
      expect(JSON.parse(tick ?? "{}")).toMatchObject({ ran: 1, pushed: events.length });
    } finally {
      removeInstallation(own);
    }
  }, 20_000);
});

describe("a worker killed during delivery", () => {
  test("after the restart the undelivered events arrive; a repeat carries the same webhook-id", async () => {
    let hung: string | undefined;
    const hook = receiver((request, index) => {
      if (index !== 2) return {};
      hung = String(request.headers["webhook-id"]);
      return { hang: true };
    });
    const answer = await send({
      message: { messageId: "e2e-3", role: "ROLE_USER", parts: [{ text: "[chunks 5 20] killed while sending" }] },
      configuration: { taskPushNotificationConfig: inlineConfig(hook.url) },
    });
    const task = answer.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    const events = await journalEvents(inst.f, task.id);
    await waitFor(
      async () => hook.requests[2]?.ownerPid !== undefined,
      10_000,
      "the third notification, held open, and its sender",
    );
    const victim = hook.requests[2]?.ownerPid as number;
    expect(await actorPids(inst.f)).toContain(victim);

    // While the worker is blocked in its delivery, the gateway holds no connection but Redis and its own clients.
    const redisPort = new URL(server.url).port;
    const gatewayPort = new URL(gateway.url).port;
    for (const [local, peer] of await connectionsOf(gateway.pid)) {
      expect(peer.endsWith(`:${redisPort}`) || local.endsWith(`:${gatewayPort}`)).toBe(true);
    }

    process.kill(victim, "SIGKILL");
    const [successor] = await waitFor(
      async () => {
        const pids = (await actorPids(inst.f)).filter((pid) => pid !== victim);
        return pids.length > 0 ? pids : undefined;
      },
      25_000,
      () => `the restarted actor; supervisor output:\n${work.lines.slice(-30).join("\n")}`,
    );
    // Its claim lapses after the push lease (2 × push.timeoutSeconds + 15 s); then the new actor goes on.
    const ids = () => [...new Set(hook.requests.map((r) => String(r.headers["webhook-id"])))];
    const hungTwice = () => hook.requests.filter((r) => r.headers["webhook-id"] === hung).length >= 2;
    await waitFor(
      async () => ids().length >= events.length && hungTwice(),
      35_000,
      "every event after the restart, the cut-off one again",
    );
    await Bun.sleep(300);
    expect(ids()).toEqual(events.map((e) => `${task.id}.${e.rev}.${task.id}`));
    // Each event reached the receiver with one webhook-id only; the one repeated is the one that was cut off.
    const byRev = new Map<number, Set<string>>();
    for (const r of hook.requests) {
      const rev = Number(String(r.headers["webhook-id"]).split(".")[1]);
      byRev.set(rev, (byRev.get(rev) ?? new Set()).add(String(r.headers["webhook-id"])));
    }
    expect([...byRev.values()].every((set) => set.size === 1)).toBe(true);
    const repeats = hook.requests.length - events.length;
    expect(repeats).toBe(1);
    expect(hook.requests.filter((r) => r.headers["webhook-id"] === hung)).toHaveLength(2);
    expect(hook.requests.map((r) => JSON.parse(r.body))).toEqual(
      [...events.slice(0, 3), ...events.slice(2)].map((e) => JSON.parse(e.ev)),
    );
    expectSignedFromActors(hook.requests, [victim, successor as number]);
    expect(hook.requests.slice(3).every((r) => r.ownerPid === successor)).toBe(true);
    expect(work.child.exitCode).toBeNull();
  }, 60_000);
});
