// A blocking request whose accept took its waiting leases is answered by its run's end: the step that ends the leg gives
// the leases back and publishes the task, as the step left it, on the waiting gateway's reply channel before the change
// notice; a step that does not end the leg, a task accepted without leases, a follow-up leg and a task too large for a
// reply publish none.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Redis } from "ioredis";
import { decodeTaskFields, type WaitingLeaseRequest } from "../../../src/journal/index.ts";
import { type JournalFixture, journalFixture, userMessage } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { type AcceptedTask, acceptTask, claimTask, liveClient, move, PROFILE, waitingLeases } from "./helpers.ts";

let server: TestRedis;
let f: JournalFixture;
let clientId: string;
beforeAll(async () => {
  server = await startRedis();
  f = journalFixture(server);
  clientId = await liveClient(f);
});
afterAll(async () => {
  await server.stop();
});

const shard = () => f.keys.shardOf(clientId);
const leases = (member: string) => waitingLeases(f, clientId, member);
const accept = (waiting?: WaitingLeaseRequest) => acceptTask(f, clientId, waiting ? { waiting } : {});

interface Listener {
  subscriber: Redis;
  /** Resolves with every message so far once the change notice of `task` at `state` is among them. */
  until(task: AcceptedTask, state: string): Promise<[string, string][]>;
}

/** Every message on the events channel and on every gateway's reply channel, in the order Redis sent them. */
async function listen(): Promise<Listener> {
  const subscriber = server.client();
  const messages: [string, string][] = [];
  const checks = new Set<() => void>();
  subscriber.on("pmessage", (_pattern: string, channel: string, message: string) => {
    messages.push([channel, message]);
    for (const check of [...checks]) check();
  });
  await subscriber.psubscribe(`${f.keys.eventsChannel()}*`);
  const until = (task: AcceptedTask, state: string) =>
    new Promise<[string, string][]>((resolve) => {
      const check = () => {
        const at = messages.findIndex(([, message]) => message.startsWith(`${task.taskId} ${state} `));
        if (at < 0) return;
        checks.delete(check);
        resolve(messages.slice(0, at + 1));
      };
      checks.add(check);
      check();
    });
  return { subscriber, until };
}

const held = async (member: string) => [
  await f.redis.zscore(f.keys.clientWaiting(shard(), clientId), member),
  await f.redis.zscore(f.keys.waiting(), member),
];

test("the run's end gives the leases back and sends the task to the waiting gateway before the change notice", async () => {
  const { until, subscriber } = await listen();
  const task = await accept(leases("gw1:r1"));
  expect(await f.redis.hget(f.keys.run(shard(), task.taskId), "w")).toBe("gw1:r1");
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_WORKING");
  expect((await held("gw1:r1")).every((score) => score !== null)).toBe(true);
  const done = await move(f, claim, task, "TASK_STATE_COMPLETED", {
    artifacts: [{ artifactId: "a1", parts: [{ text: "the answer" }] }],
  });
  const seen = await until(task, "TASK_STATE_COMPLETED");
  const channels = seen.filter(([, message]) => message.includes(task.taskId)).map(([channel]) => channel);
  const events = f.keys.eventsChannel();
  expect(channels).toEqual([events, `${events}:gw1`, events]);
  const [, reply = ""] = seen.find(([channel]) => channel === `${events}:gw1`) ?? [];
  const [member, taskId, ...json] = reply.split(" ");
  expect([member, taskId]).toEqual(["gw1:r1", task.taskId]);
  const [fields, chunks] = JSON.parse(json.join(" ")) as [string[], string];
  const record = decodeTaskFields(task.taskId, fields, chunks);
  expect(record).toMatchObject({ clientId, state: "TASK_STATE_COMPLETED", rev: done.ok ? done.rev : -1 });
  expect(record.artifacts).toEqual([{ artifactId: "a1", parts: [{ text: "the answer" }] }]);
  expect(await held("gw1:r1")).toEqual([null, null]);
  expect(await f.redis.hexists(f.keys.run(shard(), task.taskId), "w")).toBe(0);
  subscriber.disconnect();
});

test("an interrupted leg answers its request once; the follow-up leg, whose leases are its gateway's, does not", async () => {
  const { until, subscriber } = await listen();
  const task = await accept(leases("gw2:r1"));
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_INPUT_REQUIRED");
  await until(task, "TASK_STATE_INPUT_REQUIRED");
  expect(await held("gw2:r1")).toEqual([null, null]);
  expect(await f.redis.hexists(f.keys.run(shard(), task.taskId), "w")).toBe(0);
  await f.journal.resume({
    clientId,
    profile: PROFILE,
    profileQuota: 0,
    taskId: task.taskId,
    message: userMessage("more", { taskId: task.taskId, contextId: task.contextId }),
  });
  const again = await claimTask(f, task);
  await move(f, again, task, "TASK_STATE_COMPLETED");
  const seen = await until(task, "TASK_STATE_COMPLETED");
  expect(seen.filter(([channel]) => channel.endsWith(":gw2")).length).toBe(1);
  subscriber.disconnect();
});

test("a task larger than a reply carries gives the leases back and is left to its gateway's read", async () => {
  const { until, subscriber } = await listen();
  const task = await accept(leases("gw3:r1"));
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_COMPLETED", {
    artifacts: [{ artifactId: "big", parts: [{ text: "x".repeat(70_000) }] }],
  });
  const seen = await until(task, "TASK_STATE_COMPLETED");
  expect(seen.filter(([channel]) => channel !== f.keys.eventsChannel())).toEqual([]);
  expect(await held("gw3:r1")).toEqual([null, null]);
  subscriber.disconnect();
});

test("a task accepted without waiting leases ends with its change notice alone", async () => {
  const { until, subscriber } = await listen();
  const task = await accept();
  expect(await f.redis.hexists(f.keys.run(shard(), task.taskId), "w")).toBe(0);
  const claim = await claimTask(f, task);
  await move(f, claim, task, "TASK_STATE_FAILED");
  const seen = await until(task, "TASK_STATE_FAILED");
  expect(seen.filter(([channel]) => channel !== f.keys.eventsChannel())).toEqual([]);
  subscriber.disconnect();
});
