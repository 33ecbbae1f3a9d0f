// A run whose lease lapsed before its leg began (its first read waited on Redis longer than the lease), and which its
// own actor's reclaim pass hands back while the actor still holds it: once the run is WORKING its lease is live again,
// so no other actor can start it over, and it is executed once. The run executor works in this process on real
// Redis; the read is held back by a BLPOP queued before it on the connection the executor reads tasks with.
// The same window for a run that the end of the run before it claimed: its lease counts from when that step was sent,
// so a reply held up after the script ran (here, by a ledger that holds it) is renewed at once; and a renewal of the
// ended run that raced its end (answered "lost") does not keep the next run from starting.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { builtinHandlers, builtinTools } from "../../../src/actors/handlers/builtins.ts";
import { Reclaimer } from "../../../src/actors/reclaimer.ts";
import { RunExecutor } from "../../../src/actors/run-executor.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { QUEUE_GROUP, type QueueEntry, RunLedger, toQueueEntries } from "../../../src/journal/index.ts";
import { createLogger } from "../../../src/log.ts";
import { terminalEvents } from "../../faults/invariants.ts";
import { type JournalFixture, journalFixture } from "../../support/journal.ts";
import { redisTimeMs, startRedis, type TestRedis } from "../../support/redis.ts";
import { acceptTask, liveClient } from "../journal/helpers.ts";
import { waitFor } from "./harness.ts";

const LEASE_SECONDS = 3;
const CONSUMER = "holder";
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

/** The next new queue entry, read as CONSUMER (as its queue reader would); fails the test when there is none. */
async function readEntry(redis: ReturnType<TestRedis["client"]>): Promise<QueueEntry> {
  const reply = (await redis.xreadgroup("GROUP", QUEUE_GROUP, CONSUMER, "COUNT", 1, "STREAMS", f.keys.queue(0), ">")) as
    | [string, [string, string[]][]][]
    | null;
  const [entry] = toQueueEntries(0, reply?.[0]?.[1] ?? []);
  if (!entry) throw new Error("no queue entry read");
  return entry;
}

test("regression: a run whose lease lapsed before its leg began, reclaimed by its own holder, renews at once and is not started over", async () => {
  const loaded = loadConfig({
    env: {
      A2A_REDIS_KEY_PREFIX: f.prefix,
      A2A_WORKER_LEASE_SECONDS: String(LEASE_SECONDS),
      A2A_LOG_LEVEL: "error",
    },
  });
  // the finished task's journal is read below (by default the terminal step deletes it)
  const config = { ...loaded, profiles: loaded.profiles.map((p) => ({ ...p, journalRetentionSeconds: 600 })) };
  const commands = server.client();
  const reads = server.client();
  const executor = new RunExecutor({
    // the window under test lies between a claim that only takes the lease and the read of the task after it
    startInClaim: false,
    redis: reads,
    ledger: new RunLedger(commands, f.keys),
    keys: f.keys,
    config,
    handlers: builtinHandlers(),
    tools: builtinTools(),
    apiKeys: new Map(),
    consumer: CONSUMER,
    logger: createLogger("lapsed-lease-test", "error"),
  });
  const { taskId } = await acceptTask(f, clientId, { text: "[sleep 1500] held" });
  const entry = await readEntry(commands);

  // The task read after the claim waits behind this BLPOP until the gate opens.
  const gate = `${f.prefix}gate`;
  const gateOpened = reads.blpop(gate, 0);
  const processed = executor.submit(entry);
  const runKey = f.keys.run(0, taskId);
  const lease = await waitFor(
    async () => {
      const [state, until] = await f.redis.hmget(runKey, "state", "lease");
      return state === "running" && Number(until) < (await redisTimeMs(f.redis)) ? Number(until) : undefined;
    },
    (LEASE_SECONDS + 10) * 1000,
    "the claimed run's lease lapsed",
  );

  // The holder's own reclaim pass finds the entry idle past the lease and hands it to the executor that holds it.
  const ownPass = new Reclaimer(commands, f.keys, CONSUMER, LEASE_SECONDS * 1000);
  expect(await ownPass.reclaim(1)).toEqual([entry]);
  await executor.submit(entry);
  expect(executor.inflight).toBe(1);

  await f.redis.lpush(gate, "open");
  await gateOpened;
  await waitFor(
    async () => (await f.redis.hget(f.keys.task(0, taskId), "state")) === "TASK_STATE_WORKING",
    10_000,
    "the task WORKING",
  );
  // The lease was renewed before the WORKING status was written (the renewal left first on the same connection).
  const [fence, renewed] = await f.redis.hmget(runKey, "fence", "lease");
  expect(fence).toBe("1");
  expect(Number(renewed)).toBeGreaterThan(await redisTimeMs(f.redis));
  expect(Number(renewed)).toBeGreaterThan(lease);
  // Another actor holding the entry (its reclaim pass could have taken it first) cannot start the run over.
  expect(await f.ledger.claim(0, taskId, entry.id, "other", LEASE_SECONDS * 1000, config.worker.maxAttempts)).toBe(
    "leased",
  );

  await processed;
  expect(await f.redis.hget(f.keys.task(0, taskId), "state")).toBe("TASK_STATE_COMPLETED");
  expect(await f.redis.hmget(runKey, "fence", "tries")).toEqual(["1", "1"]);
  expect(await terminalEvents(f.redis, f.keys.journal(0, taskId))).toBe(1);
  expect(await commands.xpending(f.keys.queue(0), QUEUE_GROUP)).toEqual([0, null, null, null]);
  await executor.settled();
  commands.disconnect();
  reads.disconnect();
}, 30_000);

test("a next run whose claim's reply came late renews its lease at once, so no other actor can take it", async () => {
  const leaseSeconds = 9;
  const loaded = loadConfig({
    env: {
      A2A_REDIS_KEY_PREFIX: f.prefix,
      A2A_WORKER_LEASE_SECONDS: String(leaseSeconds),
      A2A_LOG_LEVEL: "error",
    },
  });
  const commands = server.client();
  // The reply of a run's end that claimed the next run is held until the test opens the gate: the script ran (the
  // next run's lease counts from then) while the actor has not heard of it yet.
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  class HeldReplies extends RunLedger {
    override async transition(input: Parameters<RunLedger["transition"]>[0]) {
      const result = await super.transition(input);
      if (result.ok && result.next) await gate;
      return result;
    }
  }
  const executor = new RunExecutor({
    redis: commands,
    ledger: new HeldReplies(commands, f.keys),
    keys: f.keys,
    config: loaded,
    handlers: builtinHandlers(),
    tools: builtinTools(),
    apiKeys: new Map(),
    consumer: CONSUMER,
    logger: createLogger("lapsed-lease-test", "error"),
    chainRuns: true,
  });
  const first = await acceptTask(f, clientId, { text: "first" });
  const entry = await readEntry(commands);
  if (entry.taskId !== first.taskId) throw new Error("the first task's queue entry was not read");
  const next = await acceptTask(f, clientId, { text: "[sleep 8000] next" });
  const processed = executor.submit(entry);

  // The first run's end claimed the next run; its reply waits until that lease has two seconds or less to go (less
  // than the keeper's period, a third of the lease: a keeper counting from the reply would renew after it lapsed).
  const runKey = f.keys.run(0, next.taskId);
  const lease = await waitFor(
    async () => {
      const [state, until] = await f.redis.hmget(runKey, "state", "lease");
      return state === "running" && Number(until) - (await redisTimeMs(f.redis)) <= 2000 ? Number(until) : undefined;
    },
    (leaseSeconds + 10) * 1000,
    "the next run's lease near its end",
  );
  open();
  await waitFor(async () => (await redisTimeMs(f.redis)) > lease, 10_000, "the claim's lease time passed");
  // renewed as soon as the actor heard of its claim (its keeper counts from when the claiming step was sent)
  const entryId = (await f.redis.hget(runKey, "entry")) ?? "";
  expect(await f.ledger.claim(0, next.taskId, entryId, "other", leaseSeconds * 1000, loaded.worker.maxAttempts)).toBe(
    "leased",
  );
  await processed;
  await waitFor(
    async () => (await f.redis.hget(f.keys.task(0, next.taskId), "state")) === "TASK_STATE_COMPLETED",
    20_000,
    "the next task completed",
  );
  expect(await f.redis.hmget(runKey, "fence", "tries")).toEqual(["1", "1"]);
  await executor.settled();
  commands.disconnect();
}, 60_000);
