// Retention work, bounded per call. The due work: interrupted tasks past their input timeout fail, finished tasks (and
// journals) past their retention are deleted with their stored bytes given back, deferred runs whose client has a
// free running slot are queued again, and so are runs whose queue entry a failover lost. The rest: client index
// entries whose task is gone, dead letters past their age, and consumers of the queue group that are gone and hold
// nothing. Only dedup records expire by a TTL.
import type { Config } from "../config/index.ts";
import {
  DueTasks,
  type KeySpace,
  LostRuns,
  type RedisLike,
  type RunLedger,
  RunQueue,
  type TaskLifetimes,
} from "../journal/index.ts";

/** Dead letters older than this are trimmed (the stream is also capped at about 10,000 entries). */
export const DEAD_LETTER_RETENTION_SECONDS = 7 * 86_400;

/** Batches of `budget` due tasks one call handles per shard and kind, at most (while the batches come back full). */
const DUE_BATCHES = 10;

/** The lifetimes of a task whose profile is not configured (the schema's defaults). */
const DEFAULT_LIFETIMES: TaskLifetimes = {
  retentionSeconds: 86_400,
  journalRetentionSeconds: 0,
  inputTimeoutSeconds: 86_400,
};

/** Each profile's lifetimes by name, from the configuration; an unknown profile gets the defaults. */
export function profileLifetimes(config: Config): (profile: string) => TaskLifetimes {
  const byName = new Map<string, TaskLifetimes>(
    config.profiles.map((p) => [
      p.name,
      {
        retentionSeconds: p.retentionSeconds,
        journalRetentionSeconds: p.journalRetentionSeconds,
        inputTimeoutSeconds: p.inputTimeoutSeconds,
      },
    ]),
  );
  return (profile) => byName.get(profile) ?? DEFAULT_LIFETIMES;
}

export interface DueWorkOptions {
  /** Tasks per batch, and clients with deferred runs looked at per shard. */
  budget: number;
  /** Queues deferred runs again, with the configured clients.maxRunningTasks. */
  ledger: RunLedger;
  /** A task's lifetimes by its profile's name (see profileLifetimes). */
  lifetimes: (profile: string) => TaskLifetimes;
  /** The configured profiles' names: each has a set of queued and running tasks per shard, a task index per client. */
  profiles: readonly string[];
}

export interface RetentionOptions extends DueWorkOptions {
  /** A consumer idle longer than this with nothing pending is removed from the group (ms). */
  consumerIdleMs: number;
  /** Consumer names never removed (the caller's own). */
  keepConsumers?: readonly string[];
}

export interface DueWorkReport {
  /** Interrupted tasks failed because their input timeout passed. */
  inputsExpired: number;
  /** Finished tasks deleted with all their keys. */
  tasksDeleted: number;
  /** Journals deleted ahead of their task. */
  journalsDeleted: number;
  /** Deferred runs queued again. */
  deferredRunsQueued: number;
  /** Runs queued again because their queue entry was gone (see LostRuns). */
  lostRunsQueued: number;
}

export interface RetentionReport extends DueWorkReport {
  indexEntriesRemoved: number;
  deadLettersTrimmed: number;
  consumersRemoved: number;
}

/** Repeats `batch` while it reports a full batch, at most DUE_BATCHES times; sums what it did. */
async function inBatches(budget: number, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < DUE_BATCHES; i++) {
    const done = await batch();
    total += done;
    if (done < budget) break;
  }
  return total;
}

/**
 * The due work of every shard: fails interrupted tasks past their input timeout, runs due deletion steps, queues
 * deferred runs again where their client has a free running slot (repairing a wake-up that an actor missed), and
 * queues again the runs of a sample of queued and running tasks whose queue entry is gone. Each step is one script
 * per task; several workers may run it at once (a step already done is a no-op).
 */
export async function applyDueWork(redis: RedisLike, keys: KeySpace, options: DueWorkOptions): Promise<DueWorkReport> {
  const { budget, ledger, lifetimes, profiles } = options;
  const due = new DueTasks(redis, keys);
  const lost = new LostRuns(redis, keys);
  const report: DueWorkReport = {
    inputsExpired: 0,
    tasksDeleted: 0,
    journalsDeleted: 0,
    deferredRunsQueued: 0,
    lostRunsQueued: 0,
  };
  for (let shard = 0; shard < keys.shards; shard++) {
    report.inputsExpired += await inBatches(budget, () => due.expireInputs(shard, budget, lifetimes));
    report.tasksDeleted += await inBatches(budget, async () => {
      const step = await due.purge(shard, budget);
      report.journalsDeleted += step.journals;
      return step.tasks + step.journals;
    });
    for (const clientId of await ledger.clientsWithDeferredRuns(shard, budget)) {
      report.deferredRunsQueued += await ledger.wakeDeferred(shard, clientId);
    }
    report.lostRunsQueued += await lost.repair(shard, profiles, budget);
  }
  report.tasksDeleted -= report.journalsDeleted;
  return report;
}

export async function applyRetention(
  redis: RedisLike,
  keys: KeySpace,
  options: RetentionOptions,
): Promise<RetentionReport> {
  const queue = new RunQueue(redis, keys);
  const report: RetentionReport = {
    ...(await applyDueWork(redis, keys, options)),
    indexEntriesRemoved: await new DueTasks(redis, keys).dropGoneIndexEntries(options.profiles, options.budget),
    deadLettersTrimmed: 0,
    consumersRemoved: 0,
  };
  const olderThanMs = Date.now() - DEAD_LETTER_RETENTION_SECONDS * 1000;
  const keep = new Set(options.keepConsumers ?? []);
  for (let shard = 0; shard < keys.shards; shard++) {
    report.deadLettersTrimmed += await queue.trimDeadLetters(shard, olderThanMs);
    report.consumersRemoved += await queue.removeIdleConsumers(shard, options.consumerIdleMs, keep, options.budget);
  }
  return report;
}
