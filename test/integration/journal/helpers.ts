// Shared steps for the journal integration tests: a live client, accepting and claiming a task, one transition, and a
// full dump of every key under a prefix (type, value, whether it expires) to prove that a refusal wrote nothing.
import { expect } from "bun:test";
import type { Redis } from "ioredis";
import type {
  Claim,
  ClientRegistry,
  TransitionInput,
  TransitionResult,
  WaitingLeaseRequest,
} from "../../../src/journal/index.ts";
import type { Artifact, StreamResponse, TaskState } from "../../../src/protocol/index.ts";
import { type JournalFixture, userMessage } from "../../support/journal.ts";
import { keysUnder } from "../../support/redis.ts";

export const PROFILE = "echo";
export const RETENTION = { retentionSeconds: 3600, journalRetentionSeconds: 600 };

/** Every key under `prefix` with its type, its whole value and whether it has a TTL; equal dumps mean nothing changed. */
export async function dumpUnder(redis: Redis, prefix: string): Promise<Record<string, unknown>> {
  const dump: Record<string, unknown> = {};
  for (const key of await keysUnder(redis, prefix)) {
    const type = await redis.type(key);
    const expires = (await redis.pttl(key)) >= 0;
    let value: unknown;
    if (type === "string") value = await redis.get(key);
    else if (type === "hash") value = await redis.hgetall(key);
    else if (type === "set") value = (await redis.smembers(key)).sort();
    else if (type === "zset") value = await redis.zrange(key, 0, -1, "WITHSCORES");
    else if (type === "stream") value = await redis.xrange(key, "-", "+");
    else if (type === "list") value = await redis.lrange(key, 0, -1);
    dump[key] = { type, expires, value };
  }
  return dump;
}

/** The current Redis time in whole seconds (the clock the scripts use). */
export async function redisSeconds(redis: Redis): Promise<number> {
  const [seconds] = await redis.time();
  return Number(seconds);
}

/** The current Redis time in milliseconds (the clock of due times and leases). */
export async function redisMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * Runs `refused`, checks that it throws and that `check` accepts the error, and that no key or value under the prefix
 * changed (a refusal writes nothing).
 */
export async function expectRefusalWritesNothing(
  f: JournalFixture,
  refused: () => Promise<unknown>,
  check: (error: unknown) => void,
): Promise<void> {
  const keysBefore = await keysUnder(f.redis, f.prefix);
  const before = await dumpUnder(f.redis, f.prefix);
  let caught: unknown;
  try {
    await refused();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeDefined();
  check(caught);
  expect(await keysUnder(f.redis, f.prefix)).toEqual(keysBefore);
  expect(await dumpUnder(f.redis, f.prefix)).toEqual(before);
}

/** A client record (with any of its own limits), the shard's consumer group and a fresh worker beat. */
export async function liveClient(
  f: JournalFixture,
  options: Omit<Parameters<ClientRegistry["add"]>[0], "name"> = {},
): Promise<string> {
  const { record } = await f.clients.add({ name: "client", ...options });
  await f.ledger.ensureGroup(f.keys.shardOf(record.id));
  await f.ledger.beat(f.keys.shardOf(record.id), 300);
  return record.id;
}

export interface AcceptedTask {
  clientId: string;
  taskId: string;
  contextId: string;
}

export async function acceptTask(
  f: JournalFixture,
  clientId: string,
  options: { profile?: string; quota?: number; text?: string; waiting?: WaitingLeaseRequest } = {},
): Promise<AcceptedTask> {
  const accepted = await f.journal.accept({
    clientId,
    profile: options.profile ?? PROFILE,
    profileQuota: options.quota ?? 0,
    message: userMessage(options.text ?? "hello"),
    waiting: options.waiting,
  });
  const contextId = await f.redis.hget(f.keys.task(f.keys.shardOf(clientId), accepted.taskId), "ctx");
  return { clientId, taskId: accepted.taskId, contextId: contextId ?? "" };
}

/** A blocking request's waiting leases under `member`, for the accept to take with its task (one node). */
export function waitingLeases(f: JournalFixture, clientId: string, member: string): WaitingLeaseRequest {
  return {
    member,
    clientKey: f.keys.clientWaiting(f.keys.shardOf(clientId), clientId),
    installationKey: f.keys.waiting(),
    ttlMs: 60_000,
    maxClient: 10,
    maxInstallation: 10,
  };
}

/** The queue entry the run currently waits on (what an actor would have read with XREADGROUP). */
export async function currentEntry(f: JournalFixture, task: AcceptedTask): Promise<string> {
  const entry = await f.redis.hget(f.keys.run(f.keys.shardOf(task.clientId), task.taskId), "entry");
  if (!entry) throw new Error(`run of ${task.taskId} has no queue entry`);
  return entry;
}

/** Claims the task's current queue entry; fails the test on any refusal. */
export async function claimTask(f: JournalFixture, task: AcceptedTask, leaseMs = 30_000, owner = "a1"): Promise<Claim> {
  const shard = f.keys.shardOf(task.clientId);
  const claim = await f.ledger.claim(shard, task.taskId, await currentEntry(f, task), owner, leaseMs, 3);
  if (typeof claim === "string") throw new Error(`claim refused: ${claim}`);
  return claim;
}

export function statusEvent(task: AcceptedTask, state: TaskState): StreamResponse {
  return { statusUpdate: { taskId: task.taskId, contextId: task.contextId, status: { state } } };
}

/** One status transition with the claim's fencing token; `extra` overrides the retentions or adds a status message. */
export async function move(
  f: JournalFixture,
  claim: Pick<Claim, "shard" | "taskId" | "fence" | "clientId" | "profile">,
  task: AcceptedTask,
  state: TaskState,
  extra: Partial<TransitionInput> = {},
): Promise<TransitionResult> {
  return await f.ledger.transition({
    claim,
    kind: "status",
    state,
    status: { state, timestamp: new Date().toISOString() },
    event: statusEvent(task, state),
    ...RETENTION,
    ...extra,
  });
}

/** One artifact update with the claim's fencing token: the task's artifact list becomes `[artifact]`. */
export async function emitArtifact(
  f: JournalFixture,
  claim: Pick<Claim, "shard" | "taskId" | "fence" | "clientId" | "profile">,
  task: AcceptedTask,
  artifact: Artifact,
  extra: Partial<TransitionInput> = {},
): Promise<TransitionResult> {
  return await f.ledger.transition({
    claim,
    kind: "artifact",
    state: "TASK_STATE_WORKING",
    event: { artifactUpdate: { taskId: task.taskId, contextId: task.contextId, artifact } },
    artifacts: [artifact],
    ...RETENTION,
    ...extra,
  });
}

/** Journal revisions of a task, oldest first. */
export async function journalRevs(f: JournalFixture, task: AcceptedTask): Promise<number[]> {
  const rows = await f.redis.xrange(f.keys.journal(f.keys.shardOf(task.clientId), task.taskId), "-", "+");
  return rows.map(([, fields]) => Number(fields[fields.indexOf("rev") + 1]));
}
