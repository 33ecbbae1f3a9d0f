// The one invariant checker every fault scenario ends with: it reads an installation's keys straight from Redis and
// lists each broken promise (orphan keys, stuck or unfinished tasks, leftover capacity leases, undelivered pushes, and
// per-client bookkeeping that drifted from the tasks it counts).
import type { Redis } from "ioredis";
import { INTERRUPTED_STATES, TERMINAL_STATES } from "../../src/protocol/index.ts";
import { keysUnder, redisTimeMs } from "../support/redis.ts";

export interface InvariantOptions {
  /**
   * Lease plus reclaim interval (ms): a WORKING task, or one whose run is running, whose run lease expired longer ago
   * than this is stuck.
   */
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
      const state = await redis.hget(key, "state");
      byState[state ?? "none"] = (byState[state ?? "none"] ?? 0) + 1;
      const runKey = `${stem}run:${taskId}`;
      if (!present.has(runKey)) {
        violations.push(`task ${taskId} (${state}) without its run`);
        continue;
      }
      if (SETTLED.has(state ?? "")) continue;
      if (options.requireSettled) violations.push(`task ${taskId} is ${state}, neither terminal nor interrupted`);
      const [runState, lease, entry] = await redis.hmget(runKey, "state", "lease", "entry");
      // A deferred run has neither on purpose: it waits in its client's deferred set (checked by tenancyViolations).
      if (runState === "deferred") continue;
      const leaseMs = Number(lease ?? 0);
      const queued = entry ? (await entriesOf(`${stem}queue`)).has(entry) : false;
      if (!queued && leaseMs <= now) {
        violations.push(`task ${taskId} (${state}, run ${runState}) has neither a queue entry nor a live lease`);
      }
      const expiredSince = Math.max(leaseMs, options.reachableSince ?? 0);
      // a claimed run's task is still SUBMITTED until the run's first step: the run's state says it is taken
      const taken = state === "TASK_STATE_WORKING" || runState === "running";
      if (taken && leaseMs > 0 && now - expiredSince > options.stuckAfterMs) {
        const reachable = expiredSince > leaseMs ? `, ${now - expiredSince} ms of them with Redis reachable` : "";
        violations.push(
          `task ${taskId} stuck ${state} (run ${runState}) ${now - leaseMs} ms past its lease${reachable}`,
        );
      }
    } else if (rest.startsWith("outbox:")) {
      // what is left of a task's outbox: its queued deliveries (a settled queue leaves no field behind)
      const pending = (await redis.hkeys(key)).filter((field) => /^\d+:/.test(field)).length;
      if (pending > 0)
        violations.push(`${pending} push deliveries of task ${rest.slice(7)} neither delivered nor dead`);
    }
    if (LEASE_SETS.test(key) && (await redis.type(key)) === "zset") {
      const live = await redis.zcount(key, `(${now}`, "+inf");
      if (live > (options.liveLeasesAllowed ?? Number.POSITIVE_INFINITY)) {
        violations.push(`${live} live capacity leases left in ${key}`);
      }
    }
  }
  violations.push(...(await tenancyViolations(redis, prefix)));
  return { keys: keys.length, tasks, byState, violations };
}

/**
 * Read in one atomic step (a script over KEYS, for tests only), so that work in progress cannot make a false alarm:
 * each shard's stored-bytes counters equal the sums of their tasks' `bytes`, `jbytes` and `obytes`; each client's interrupted
 * set holds exactly its INPUT_REQUIRED and AUTH_REQUIRED tasks, each with an input timeout scheduled; a running set
 * holds only running runs; a run is deferred exactly when it is in its client's deferred set; each task is in the
 * ListTasks index of its state, and a state index holds no task in another state.
 */
const TENANCY_SCRIPT = `
local violations = {}
local function add(text) violations[#violations + 1] = text end
local sums, interrupted, stems = {}, {}, {}
local function bucket(t, k) if not t[k] then t[k] = {} end return t[k] end
local keys = redis.call('KEYS', ARGV[1] .. '*')
for _, key in ipairs(keys) do
  local stem = string.match(key, '^(.*{%d+}:)')
  if stem then stems[stem] = true end
  local id = stem and string.match(key, '^.*{%d+}:task:([^:]+)$')
  if id then
    local t = redis.call('HMGET', key, 'cli', 'prof', 'state', 'bytes', 'jbytes', 'obytes')
    local n = tonumber(t[4] or 0) + tonumber(t[5] or 0) + tonumber(t[6] or 0)
    local s = bucket(sums, stem)
    s['client:' .. (t[1] or '?')] = (s['client:' .. (t[1] or '?')] or 0) + n
    s['profile:' .. (t[2] or '?')] = (s['profile:' .. (t[2] or '?')] or 0) + n
    if t[3] == 'TASK_STATE_INPUT_REQUIRED' or t[3] == 'TASK_STATE_AUTH_REQUIRED' then
      bucket(bucket(interrupted, stem), t[1])[id] = true
      if not redis.call('ZSCORE', stem .. 'inputdue', id) then add('interrupted task ' .. id .. ' has no input timeout') end
    end
    if t[1] and t[2] and t[3] and not redis.call('ZSCORE', stem .. 'client:' .. t[1] .. ':tasks:' .. t[2] .. ':' .. t[3], id) then
      add('task ' .. id .. ' in ' .. t[3] .. ' is not in its state index')
    end
    local run = redis.call('HMGET', stem .. 'run:' .. id, 'state', 'client')
    if run[1] == 'deferred' and not redis.call('ZSCORE', stem .. 'client:' .. run[2] .. ':deferred', id) then
      add('deferred run of ' .. id .. ' is in no deferred set')
    end
  end
end
for stem in pairs(stems) do
  local s = sums[stem] or {}
  local stored = redis.call('HGETALL', stem .. 'bytes')
  local seen = {}
  for i = 1, #stored, 2 do
    seen[stored[i]] = true
    if tonumber(stored[i + 1]) ~= (s[stored[i]] or 0) then
      add(stem .. 'bytes ' .. stored[i] .. ' is ' .. stored[i + 1] .. ' but its tasks hold ' .. (s[stored[i]] or 0))
    end
  end
  for name, n in pairs(s) do
    if not seen[name] and n ~= 0 then add(stem .. 'bytes has no ' .. name .. ' but its tasks hold ' .. n) end
  end
end
for _, key in ipairs(keys) do
  local stem, client, kind = string.match(key, '^(.*{%d+}:)client:([^:]+):(%a+)$')
  local indexed = string.match(key, '^.*{%d+}:client:[^:]+:tasks:[^:]+:(TASK_STATE_[%u_]+)$')
  if indexed then
    for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
      local state = redis.call('HGET', string.match(key, '^(.*{%d+}:)') .. 'task:' .. id, 'state')
      if state and state ~= indexed then add(key .. ' holds ' .. id .. ', which is ' .. state) end
    end
  end
  if kind == 'interrupted' then
    local want = (interrupted[stem] or {})[client] or {}
    for _, id in ipairs(redis.call('SMEMBERS', key)) do
      if not want[id] then add(key .. ' holds ' .. id .. ', which is not interrupted') end
      want[id] = nil
    end
    for id in pairs(want) do add(key .. ' lacks interrupted task ' .. id) end
    if interrupted[stem] then interrupted[stem][client] = nil end
  elseif kind == 'running' then
    for _, id in ipairs(redis.call('SMEMBERS', key)) do
      local state = redis.call('HGET', stem .. 'run:' .. id, 'state')
      if state ~= 'running' then add(key .. ' holds ' .. id .. ', whose run is ' .. tostring(state)) end
    end
  elseif kind == 'deferred' then
    for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
      local state = redis.call('HGET', stem .. 'run:' .. id, 'state')
      if state ~= 'deferred' then add(key .. ' holds ' .. id .. ', whose run is ' .. tostring(state)) end
    end
  end
end
for stem, clients in pairs(interrupted) do
  for client, ids in pairs(clients) do
    for id in pairs(ids) do add('interrupted task ' .. id .. ' is missing from the set of client ' .. client) end
  end
end
return violations
`;

/** The bookkeeping violations under `prefix` (see TENANCY_SCRIPT); empty when every count matches its tasks. */
export async function tenancyViolations(redis: Redis, prefix: string): Promise<string[]> {
  return (await redis.eval(TENANCY_SCRIPT, 0, prefix)) as string[];
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
