// Retention work that no TTL does by itself, bounded per call: client index entries whose task expired, dead letters
// past their age, and consumers of the queue group that are gone and hold nothing. Task, run, journal and dedup keys
// expire by their own TTLs (set by the transition and accept scripts).
import { type KeySpace, QUEUE_GROUP, type RedisLike } from "../journal/index.ts";

/** Dead letters older than this are trimmed (the stream is also capped at about 10,000 entries). */
export const DEAD_LETTER_RETENTION_SECONDS = 7 * 86_400;

export interface RetentionOptions {
  /** Most index entries checked in this call. */
  budget: number;
  /** A consumer idle longer than this with nothing pending is removed from the group (ms). */
  consumerIdleMs: number;
  /** Consumer names never removed (the caller's own). */
  keepConsumers?: readonly string[];
}

export interface RetentionReport {
  indexEntriesRemoved: number;
  deadLettersTrimmed: number;
  consumersRemoved: number;
}

/** Field → value of one XINFO CONSUMERS row (a flat array). */
function row(values: unknown): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (Array.isArray(values)) for (let i = 0; i + 1 < values.length; i += 2) map.set(String(values[i]), values[i + 1]);
  return map;
}

async function cleanIndexes(redis: RedisLike, keys: KeySpace, budget: number): Promise<number> {
  const clients = (await redis.srandmember(keys.clients(), Math.min(budget, 100))) as string[];
  if (clients.length === 0) return 0;
  const perClient = Math.max(5, Math.floor(budget / clients.length));
  let checked = 0;
  let removed = 0;
  for (const clientId of clients) {
    if (checked >= budget) break;
    const shard = keys.shardOf(clientId);
    const index = keys.clientTasks(shard, clientId);
    // The oldest entries are the likeliest to have expired; a random sample reaches the rest over time.
    const oldest = await redis.zrange(index, 0, perClient - 1);
    const sample = ((await redis.call("ZRANDMEMBER", index, perClient)) as string[] | null) ?? [];
    const ids = [...new Set([...oldest, ...sample])];
    checked += ids.length;
    if (ids.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const id of ids) pipeline.exists(keys.task(shard, id));
    const replies = (await pipeline.exec()) ?? [];
    const gone = ids.filter((_, i) => replies[i]?.[1] === 0);
    if (gone.length > 0) removed += await redis.zrem(index, ...gone);
  }
  return removed;
}

async function removeIdleConsumers(
  redis: RedisLike,
  queue: string,
  idleMs: number,
  keep: ReadonlySet<string>,
  budget: number,
): Promise<number> {
  let rows: unknown[];
  try {
    rows = (await redis.call("XINFO", "CONSUMERS", queue, QUEUE_GROUP)) as unknown[];
  } catch {
    return 0; // no stream or no group yet
  }
  let removed = 0;
  for (const values of rows) {
    if (removed >= budget) break;
    const consumer = row(values);
    const name = String(consumer.get("name") ?? "");
    if (keep.has(name) || Number(consumer.get("pending")) !== 0 || Number(consumer.get("idle")) <= idleMs) continue;
    removed += Number(await redis.call("XGROUP", "DELCONSUMER", queue, QUEUE_GROUP, name)) >= 0 ? 1 : 0;
  }
  return removed;
}

export async function applyRetention(
  redis: RedisLike,
  keys: KeySpace,
  options: RetentionOptions,
): Promise<RetentionReport> {
  const report: RetentionReport = {
    indexEntriesRemoved: await cleanIndexes(redis, keys, options.budget),
    deadLettersTrimmed: 0,
    consumersRemoved: 0,
  };
  const minId = `${Date.now() - DEAD_LETTER_RETENTION_SECONDS * 1000}-0`;
  const keep = new Set(options.keepConsumers ?? []);
  for (let shard = 0; shard < keys.shards; shard++) {
    report.deadLettersTrimmed += Number(await redis.call("XTRIM", keys.dead(shard), "MINID", "~", minId));
    report.consumersRemoved += await removeIdleConsumers(
      redis,
      keys.queue(shard),
      options.consumerIdleMs,
      keep,
      options.budget,
    );
  }
  return report;
}
