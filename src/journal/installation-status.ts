// The installation's state as an operator asks for it, read from Redis: live consumers and sweep ticks with their
// ages, queue depth, the oldest queued run's age, running runs, runs deferred at their client's running limit,
// interrupted tasks, deletions due, expired leases, dead letters, and the webhook outbox.
// Read-only; shared by `a2a-runtime status` and the gateway's /metrics.
import type { Config } from "../config/index.ts";
import { type KeySpace, QUEUE_GROUP } from "./keys.ts";
import { queueOf } from "./push-outbox.ts";
import type { RedisLike } from "./scripts.ts";

export interface WorkerStatus {
  id: string;
  mode: "consume" | "sweep";
  pid: number;
  host: string;
  version: string;
  started: string;
  /** Seconds since the worker's last beat. */
  ageSeconds: number;
  /** Whether that beat is within worker.livenessSeconds. */
  live: boolean;
  inflight: number;
  done: number;
}

export interface StatusReport {
  /** Redis's clock when the report was read (ISO 8601). */
  at: string;
  livenessSeconds: number;
  workers: WorkerStatus[];
  liveConsumers: number;
  liveSweeps: number;
  /** Queued runs no consumer has taken yet. */
  queueDepth: number;
  /** Age of the oldest of those, in seconds; null when none is queued. */
  oldestQueuedAgeSeconds: number | null;
  /** Runs taken by a consumer and not finished (pending entries). */
  running: number;
  /** Running runs whose lease passed without a renewal (their actor is likely gone; they will be reclaimed). */
  expiredLeases: number;
  /** Runs waiting for a running slot of their client (clients.maxRunningTasks), counted over at most 1,000 clients. */
  deferredRuns: number;
  /** Clients with deferred runs. */
  deferredClients: number;
  /** Tasks in INPUT_REQUIRED or AUTH_REQUIRED (each fails after its profile's inputTimeoutSeconds). */
  interruptedTasks: number;
  /** Finished tasks (or their journals) whose deletion is due and not yet done: the retention pass's backlog. */
  deletionsDue: number;
  deadLetters: number;
  /** Webhook notifications waiting in the outbox (counted over at most PUSH_SCAN_LIMIT queues per shard). */
  pushPending: number;
  /** Tasks with webhook notifications waiting. */
  pushPendingTasks: number;
  /** Webhook notifications given up (entries of the push dead-letter streams). */
  pushDeadLetters: number;
}

/** The most pending entries inspected per shard when counting expired leases. */
const EXPIRED_SCAN_LIMIT = 1000;
/** The most webhook queues (a task's deliveries to one config) per shard whose notifications are counted one by one. */
const PUSH_SCAN_LIMIT = 1000;
/** The most clients per shard whose deferred runs are counted one by one. */
const DEFERRED_SCAN_LIMIT = 1000;

function entryMs(id: string): number {
  return Number(id.split("-")[0]);
}

async function readWorkers(redis: RedisLike, keys: KeySpace, nowMs: number, livenessSeconds: number) {
  const ids = await redis.zrange(keys.workers(), 0, -1);
  // One read per worker, not one pipeline: on a cluster the workers' hashes sit in different slots.
  const hashes = await Promise.all(ids.map((id) => redis.hgetall(keys.worker(id))));
  const workers: WorkerStatus[] = [];
  ids.forEach((id, i) => {
    const hash: Record<string, string> = hashes[i] ?? {};
    if (!hash.beat) return; // expired: the worker is gone
    const ageSeconds = Math.max(0, Math.round((nowMs - Date.parse(hash.beat)) / 100) / 10);
    workers.push({
      id,
      mode: hash.mode === "sweep" ? "sweep" : "consume",
      pid: Number(hash.pid ?? 0),
      host: hash.host ?? "",
      version: hash.version ?? "",
      started: hash.started ?? "",
      ageSeconds,
      live: ageSeconds <= livenessSeconds,
      inflight: Number(hash.inflight ?? 0),
      done: Number(hash.done ?? 0),
    });
  });
  return workers;
}

async function readShard(redis: RedisLike, keys: KeySpace, shard: number, leaseMs: number) {
  const queue = keys.queue(shard);
  const length = await redis.xlen(queue);
  const deadLetters = await redis.xlen(keys.dead(shard));
  let running = 0;
  let expired = 0;
  let oldestMs: number | undefined;
  if (length > 0) {
    const groups = (await redis.call("XINFO", "GROUPS", queue).catch(() => [])) as unknown[][];
    const group = groups.find((row) => row[row.indexOf("name") + 1] === QUEUE_GROUP);
    const lastDelivered = group ? String(group[group.indexOf("last-delivered-id") + 1]) : "0-0";
    running = group ? Number(group[group.indexOf("pending") + 1]) : 0;
    const first = await redis.xrange(queue, `(${lastDelivered}`, "+", "COUNT", 1);
    if (first[0]) oldestMs = entryMs(first[0][0]);
    if (running > 0) {
      const idle = (await redis.call(
        "XPENDING",
        queue,
        QUEUE_GROUP,
        "IDLE",
        leaseMs,
        "-",
        "+",
        EXPIRED_SCAN_LIMIT,
      )) as unknown[];
      expired = idle.length;
    }
  }
  return { queued: Math.max(0, length - running), running, expired, oldestMs, deadLetters };
}

async function readPush(redis: RedisLike, keys: KeySpace, shard: number) {
  const ready = keys.pushReady(shard);
  const queues = await redis.zcard(ready);
  const dead = await redis.xlen(keys.pushDead(shard));
  let pending = 0;
  let tasks = 0;
  if (queues > 0) {
    // one queue per task and config: its length is what it queued less what it settled since it was last empty
    const listed = (await redis.zrange(ready, 0, PUSH_SCAN_LIMIT - 1)).map((member) => queueOf(shard, member));
    const pipeline = redis.pipeline();
    for (const { taskId, configId } of listed) {
      if (configId === undefined) pipeline.llen(keys.legacyPushQueue(shard, taskId));
      else pipeline.hmget(keys.pushOutbox(shard, taskId), `n:${configId}`, `d:${configId}`);
    }
    for (const [, reply] of (await pipeline.exec()) ?? []) {
      pending += Array.isArray(reply) ? Number(reply[0] ?? 0) - Number(reply[1] ?? 0) : Number(reply ?? 0);
    }
    tasks = new Set(listed.map((queue) => queue.taskId)).size;
    // past the scan, a queue counts as a task of its own
    tasks += queues - listed.length;
  }
  return { tasks, pending, dead };
}

async function readTenancy(redis: RedisLike, keys: KeySpace, shard: number, nowMs: number) {
  const clients = await redis.scard(keys.deferredClients(shard));
  let deferred = 0;
  if (clients > 0) {
    const ids = (await redis.srandmember(keys.deferredClients(shard), DEFERRED_SCAN_LIMIT)) as string[];
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.zcard(keys.clientDeferred(shard, id));
    for (const [, count] of (await pipeline.exec()) ?? []) deferred += Number(count ?? 0);
  }
  const interrupted = await redis.zcard(keys.inputDue(shard));
  const deletionsDue = await redis.zcount(keys.purge(shard), "-inf", nowMs);
  return { clients, deferred, interrupted, deletionsDue };
}

/** Reads the status report; `nowMs` from Redis's clock so that ages do not depend on this machine's. */
export async function readStatus(redis: RedisLike, keys: KeySpace, config: Config): Promise<StatusReport> {
  const [seconds, micros] = (await redis.call("TIME")) as [string, string];
  const nowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  const { livenessSeconds, leaseSeconds } = config.worker;
  const workers = await readWorkers(redis, keys, nowMs, livenessSeconds);
  const report: StatusReport = {
    at: new Date(nowMs).toISOString(),
    livenessSeconds,
    workers,
    liveConsumers: workers.filter((w) => w.live && w.mode === "consume").length,
    liveSweeps: workers.filter((w) => w.live && w.mode === "sweep").length,
    queueDepth: 0,
    oldestQueuedAgeSeconds: null,
    running: 0,
    expiredLeases: 0,
    deferredRuns: 0,
    deferredClients: 0,
    interruptedTasks: 0,
    deletionsDue: 0,
    deadLetters: 0,
    pushPending: 0,
    pushPendingTasks: 0,
    pushDeadLetters: 0,
  };
  let oldestMs: number | undefined;
  for (let shard = 0; shard < keys.shards; shard++) {
    const s = await readShard(redis, keys, shard, leaseSeconds * 1000);
    report.queueDepth += s.queued;
    report.running += s.running;
    report.expiredLeases += s.expired;
    report.deadLetters += s.deadLetters;
    const tenancy = await readTenancy(redis, keys, shard, nowMs);
    report.deferredRuns += tenancy.deferred;
    report.deferredClients += tenancy.clients;
    report.interruptedTasks += tenancy.interrupted;
    report.deletionsDue += tenancy.deletionsDue;
    const push = await readPush(redis, keys, shard);
    report.pushPending += push.pending;
    report.pushPendingTasks += push.tasks;
    report.pushDeadLetters += push.dead;
    if (s.oldestMs !== undefined && (oldestMs === undefined || s.oldestMs < oldestMs)) oldestMs = s.oldestMs;
  }
  if (oldestMs !== undefined) report.oldestQueuedAgeSeconds = Math.max(0, Math.round((nowMs - oldestMs) / 1000));
  return report;
}
