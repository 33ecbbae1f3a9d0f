// The one invariant checker every fault scenario ends with: it reads an installation's keys straight from Redis and
// lists each broken promise (orphan keys, stuck or unfinished tasks, leftover capacity leases, undelivered pushes).
import type { Redis } from "ioredis";
import { INTERRUPTED_STATES, TERMINAL_STATES } from "../../src/protocol/index.ts";
import { keysUnder, redisTimeMs } from "../support/redis.ts";

export interface InvariantOptions {
  /** Lease plus reclaim interval (ms): a WORKING task whose run lease expired longer ago than this is stuck. */
  stuckAfterMs: number;
  /**
   * Redis time (ms) since which workers could reach Redis again after an outage or a pause: a lease that lapsed
   * before counts as expired from then on, as neither its holder nor a reclaimer could act while Redis was away.
   */
  reachableSince?: number;
  /** When true, every task must be terminal or interrupted (the load has ended and the work is done). */
  requireSettled?: boolean;
  /** Live capacity leases (waiting, streams) allowed, e.g. 0 once no request is open. */
  liveLeasesAllowed?: number;
}

export interface InvariantReport {
  keys: number;
  tasks: number;
  byState: Record<string, number>;
  violations: string[];
}

const SETTLED = new Set<string>([...TERMINAL_STATES, ...INTERRUPTED_STATES]);
const LEASE_SETS = /(?:^|:)(?:waiting|streams|streams:task:[^:]+|streams:client:[^:]+)$/;

/** Checks every invariant under `prefix`; an empty `violations` means they all hold. */
export async function checkInvariants(
  redis: Redis,
  prefix: string,
  options: InvariantOptions,
): Promise<InvariantReport> {
  const keys = await keysUnder(redis, prefix);
  const present = new Set(keys);
  const now = await redisTimeMs(redis);
  const violations: string[] = [];
  const byState: Record<string, number> = {};
  let tasks = 0;
  const queueEntries = new Map<string, Set<string>>();
  const entriesOf = async (queue: string): Promise<Set<string>> => {
    let ids = queueEntries.get(queue);
    if (!ids) {
      ids = new Set(present.has(queue) ? (await redis.xrange(queue, "-", "+")).map(([id]) => id) : []);
      queueEntries.set(queue, ids);
    }
    return ids;
  };

  for (const key of keys) {
    const shard = /^(.*\{\d+\}:)(.*)$/.exec(key);
    const stem = shard?.[1] ?? "";
    const rest = shard?.[2] ?? "";
    if (rest.startsWith("dedup:")) {
      const value = (await redis.get(key)) ?? "";
      const taskId = value.slice(value.indexOf(":") + 1);
      if (!present.has(`${stem}task:${taskId}`)) violations.push(`dedup record ${key} names task ${taskId}, absent`);
    } else if (rest.startsWith("run:")) {
      if (!present.has(`${stem}task:${rest.slice(4)}`)) violations.push(`run ${key} without its task`);
    } else if (rest.startsWith("task:")) {
      tasks += 1;
      const taskId = rest.slice(5);
      const [state, runId] = await redis.hmget(key, "state", "run");
      byState[state ?? "none"] = (byState[state ?? "none"] ?? 0) + 1;
      const runKey = `${stem}run:${taskId}`;
      if (!runId || !present.has(runKey)) {
        violations.push(`task ${taskId} (${state}) without its run`);
        continue;
      }
      if (SETTLED.has(state ?? "")) continue;
      if (options.requireSettled) violations.push(`task ${taskId} is ${state}, neither terminal nor interrupted`);
      const [runState, lease, entry] = await redis.hmget(runKey, "state", "lease", "entry");
      const leaseMs = Number(lease ?? 0);
      const queued = entry ? (await entriesOf(`${stem}queue`)).has(entry) : false;
      if (!queued && leaseMs <= now) {
        violations.push(`task ${taskId} (${state}, run ${runState}) has neither a queue entry nor a live lease`);
      }
      const expiredSince = Math.max(leaseMs, options.reachableSince ?? 0);
      if (state === "TASK_STATE_WORKING" && leaseMs > 0 && now - expiredSince > options.stuckAfterMs) {
        const reachable = expiredSince > leaseMs ? `, ${now - expiredSince} ms of them with Redis reachable` : "";
        violations.push(`task ${taskId} stuck WORKING ${now - leaseMs} ms past its lease${reachable}`);
      }
    } else if (rest.startsWith("pushq:")) {
      const pending = await redis.llen(key);
      if (pending > 0)
        violations.push(`${pending} push deliveries of task ${rest.slice(6)} neither delivered nor dead`);
    }
    if (LEASE_SETS.test(key) && (await redis.type(key)) === "zset") {
      const live = await redis.zcount(key, `(${now}`, "+inf");
      if (live > (options.liveLeasesAllowed ?? Number.POSITIVE_INFINITY)) {
        violations.push(`${live} live capacity leases left in ${key}`);
      }
    }
  }
  return { keys: keys.length, tasks, byState, violations };
}

/** Live (unexpired) capacity leases under `prefix`: waiting requests and SSE streams, every gateway's. */
export async function liveCapacityLeases(redis: Redis, prefix: string): Promise<number> {
  const now = await redisTimeMs(redis);
  let live = 0;
  for (const key of await keysUnder(redis, prefix)) {
    if (LEASE_SETS.test(key) && (await redis.type(key)) === "zset") live += await redis.zcount(key, `(${now}`, "+inf");
  }
  return live;
}

/** Exactly one terminal event per task in its journal: no run was executed (and finished) twice. */
export async function terminalEvents(redis: Redis, journalKey: string): Promise<number> {
  const entries = await redis.xrange(journalKey, "-", "+");
  let terminal = 0;
  for (const [, fields] of entries) {
    const ev = fields[fields.indexOf("ev") + 1] ?? "{}";
    const state = (JSON.parse(ev) as { statusUpdate?: { status?: { state?: string } } }).statusUpdate?.status?.state;
    if (state && (TERMINAL_STATES as readonly string[]).includes(state)) terminal += 1;
  }
  return terminal;
}
