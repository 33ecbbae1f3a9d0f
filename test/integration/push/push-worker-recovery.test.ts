// The push worker when workers stop, die or compete: nothing undelivered is lost, a repeat carries the same
// webhook-id, and one task's events never reach the receiver out of order. Real receivers on 127.0.0.1 only.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { PushOutbox } from "../../../src/journal/index.ts";
import { deliverOnce, type PushWorker, type PushWorkerDeps } from "../../../src/push/index.ts";
import { type JournalFixture, journalFixture, queuedDeliveries } from "../../support/journal.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { type Answer, loopbackOnly, type Received, type Receiver, startReceiver } from "./receiver.ts";
import { pushWorker, revOf, runEvents, runSteps, SECRET, taskWithHooks, waitFor } from "./worker-fixture.ts";

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

const hookUrl = (hook: Receiver) => `http://127.0.0.1:${hook.port}/hook`;
const bodies = (requests: Received[]) => requests.map((request) => JSON.parse(request.body) as unknown);
const events = (journal: { ev: string }[]) => journal.map((entry) => JSON.parse(entry.ev) as unknown);
const taskOf = (request: Received): string | undefined => {
  const body = JSON.parse(request.body) as { statusUpdate?: { taskId: string }; artifactUpdate?: { taskId: string } };
  return (body.statusUpdate ?? body.artifactUpdate)?.taskId;
};
const STEPS = ["TASK_STATE_WORKING", "one", "two", "three", "TASK_STATE_COMPLETED"];

describe("recovery", () => {
  test("stop() lets the attempt in flight finish and settle; another worker delivers the rest, once each", async () => {
    f = journalFixture(server);
    const hook = await receiver(() => ({ delayMs: 300 }));
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, STEPS);
    const first = worker();
    first.start();
    await waitFor("the second webhook", () => hook.requests.length >= 2);
    await first.stop();
    expect(first.busy).toBe(0);
    expect(first.counters.delivered).toBe(2);
    expect(await queuedDeliveries(f.redis, f.keys, task.taskId)).toHaveLength(3);
    await Bun.sleep(400);
    expect(hook.requests).toHaveLength(2);

    worker().start();
    await waitFor("every webhook", () => hook.requests.length >= 5);
    await Bun.sleep(400);
    expect(bodies(hook.requests)).toEqual(events(await runEvents(f, task)));
  });

  test("a worker that dies mid-delivery: after its lease the events are delivered, a repeat with the same id", async () => {
    f = journalFixture(server);
    const at: number[] = [];
    const hook = await receiver(() => {
      at.push(Date.now());
      return {};
    });
    const task = await taskWithHooks(f, [hookUrl(hook)]);
    await runSteps(f, task, STEPS);

    // The "crashed" worker: claims with a 1 s lease, sends the head, and dies before recording it.
    const outbox = new PushOutbox(f.redis, f.keys);
    const claimedAt = Date.now();
    expect(await outbox.claim(0, 10, 1000)).toEqual([{ shard: 0, taskId: task.taskId, configId: "c0" }]);
    const due = await outbox.head(0, task.taskId, "c0");
    if (due?.config === undefined) throw new Error("no head delivery");
    const sent = await deliverOnce(
      { id: due.delivery.id, url: due.config.url, body: due.delivery.ev },
      { policy: { allowHosts: [`127.0.0.1:${hook.port}`] }, secrets: [SECRET], timeoutMs: 2000, request: connector },
    );
    expect(sent.kind).toBe("delivered");

    const survivor = worker();
    survivor.start();
    await waitFor("every webhook", () => survivor.counters.delivered === 5);
    expect((at[1] ?? 0) - claimedAt).toBeGreaterThanOrEqual(950);
    const ids = hook.requests.map((request) => String(request.headers["webhook-id"]));
    expect(ids[1]).toBe(ids[0] as string);
    expect(hook.requests[1]?.body).toBe(hook.requests[0]?.body as string);
    expect(bodies(hook.requests.slice(1))).toEqual(events(await runEvents(f, task)));
    expect(new Set(ids).size).toBe(5);
    expect(survivor.counters.delivered).toBe(5);
  });
});

describe("competing workers", () => {
  test("two workers on one Redis deliver every task's events, and never one task's out of order", async () => {
    f = journalFixture(server);
    let count = 0;
    const statuses: number[] = [];
    const hook = await receiver(() => {
      count += 1;
      const status = count % 4 === 0 ? 503 : 200;
      statuses.push(status);
      return { status, delayMs: count % 3 === 0 ? 15 : 0 };
    });
    const tasks = await Promise.all([1, 2, 3, 4].map(() => taskWithHooks(f, [hookUrl(hook)])));
    // Every task has a notification due before the workers start, so each one's first claim (two tasks, its
    // concurrency) finds work: which of them delivers does not depend on how fast the machine writes the steps.
    // The rest of the steps are written while both deliver.
    const before = ["TASK_STATE_WORKING", "p1"];
    const after = ["p2", "p3", "p4", "p5", "TASK_STATE_COMPLETED"];
    const runs = await Promise.all(tasks.map((task) => runSteps(f, task, before)));
    const a = worker({ concurrency: 2, backoffBaseMs: 30 });
    const b = worker({ concurrency: 2, backoffBaseMs: 30 });
    a.start();
    b.start();
    await Promise.all(runs.map((run) => run.steps(...after)));
    const total = tasks.length * (before.length + after.length);
    await waitFor("every event", () => a.counters.delivered + b.counters.delivered >= total, 15_000);

    for (const task of tasks) {
      const mine = hook.requests.filter((request) => taskOf(request) === task.taskId);
      const revs = mine.map(revOf);
      expect(revs).toEqual([...revs].sort((x, y) => x - y));
      const delivered = hook.requests.filter((request, index) => mine.includes(request) && statuses[index] === 200);
      expect(bodies(delivered)).toEqual(events(await runEvents(f, task)));
    }
    expect(a.counters.delivered).toBeGreaterThan(0);
    expect(b.counters.delivered).toBeGreaterThan(0);
    expect(a.counters.delivered + b.counters.delivered).toBe(total);
  });
});
