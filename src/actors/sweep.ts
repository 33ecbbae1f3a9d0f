// The sweep (`a2a-runtime sweep --once | --interval S`): a worker without a long-lived consumer. Each tick records a
// heartbeat (mode sweep), reclaims expired leases, runs what is queued up to worker.sweepBatch with the actors' run
// code, delivers the webhooks that are due (within a time budget), and applies retention.
import type { Config } from "../config/index.ts";
import { type QueueEntry, RunQueue } from "../journal/index.ts";
import type { RetentionReport } from "./retention.ts";
import type { RunExecutor } from "./run-executor.ts";
import { WorkerCore, type WorkerOptions } from "./worker-core.ts";

export interface SweepOptions extends WorkerOptions {
  /** One tick, then exit (for cron); otherwise a tick every intervalSeconds until signal aborts. */
  once: boolean;
  /** Seconds between the starts of two ticks (default worker.heartbeatSeconds). */
  intervalSeconds?: number;
  /** Aborting it ends the loop after the current tick. */
  signal?: AbortSignal;
}

export interface SweepTick {
  reclaimed: number;
  ran: number;
  /** Webhook attempts made (one per task whose next notification was due). */
  pushed: number;
  retention: RetentionReport;
}

/** The longest a tick spends on webhooks, ms (less when the interval between ticks is shorter). */
const PUSH_BUDGET_MS = 30_000;

/** Runs `entries` with at most `concurrency` at once. */
async function runAll(executor: RunExecutor, entries: readonly QueueEntry[], concurrency: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < entries.length) {
      const entry = entries[next++];
      if (entry) await executor.submit(entry);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, lane));
}

/** A sweep uses two connections: commands (the core's) and the cancel subscription. */
class Sweep {
  readonly core: WorkerCore;

  constructor(
    private readonly config: Config,
    o: SweepOptions,
    private readonly pushBudgetMs: number,
  ) {
    this.core = new WorkerCore(config, o, "sweep");
  }

  async tick(): Promise<SweepTick> {
    const { core } = this;
    const { sweepBatch, concurrency } = this.config.worker;
    await core.heartbeat.beat();
    const reclaimed = await core.reclaimer.reclaim(sweepBatch);
    const queued = await this.readQueued(Math.max(0, sweepBatch - reclaimed.length));
    const entries = [...reclaimed, ...queued];
    await runAll(core.executor, entries, concurrency);
    const pushed = await core.push.tick(this.pushBudgetMs);
    const retention = await core.retention();
    await core.heartbeat.beat();
    return { reclaimed: reclaimed.length, ran: entries.length, pushed, retention };
  }

  close(): void {
    this.core.heartbeat.stop();
    this.core.cancels.close();
    this.core.redis.disconnect();
  }

  /** Up to `count` new entries per shard, one read per shard: a cluster refuses one read across slots (CROSSSLOT). */
  private async readQueued(count: number): Promise<QueueEntry[]> {
    if (count <= 0) return [];
    const { redis, keys, workerId } = this.core;
    const queue = new RunQueue(redis, keys);
    const shards = Array.from({ length: keys.shards }, (_, shard) => shard);
    const replies = await Promise.all(shards.map((shard) => queue.readNew(workerId, [shard], count)));
    return replies.flat();
  }
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Runs the sweep; resolves with the exit code (0, or 1 when a `--once` tick failed). */
export async function runSweep(config: Config, options: SweepOptions): Promise<number> {
  const { logger, signal } = options;
  const intervalMs = (options.intervalSeconds ?? config.worker.heartbeatSeconds) * 1000;
  const sweep = new Sweep(config, options, options.once ? PUSH_BUDGET_MS : Math.min(PUSH_BUDGET_MS, intervalMs));
  let code = 0;
  try {
    await sweep.core.ensureGroups();
    await sweep.core.cancels.start();
    await sweep.core.heartbeat.start(); // keeps beating while a long run executes inside a tick
  } catch (error) {
    logger.error({ err: error }, "sweep could not start");
    sweep.close();
    return 1;
  }
  try {
    do {
      const started = Date.now();
      try {
        const tick = await sweep.tick();
        logger.info({ workerId: sweep.core.workerId, ...tick }, "sweep tick");
        code = 0;
      } catch (error) {
        logger.error({ err: error }, "sweep tick failed");
        code = 1;
      }
      if (options.once || signal?.aborted) break;
      await wait(Math.max(0, intervalMs - (Date.now() - started)), signal);
    } while (!signal?.aborted);
  } finally {
    sweep.close();
  }
  return code;
}
