// One actor process's work: consumes the run queues of every shard with a consumer group, runs up to
// worker.concurrency runs at once, reclaims expired leases, does the due retention work (input timeouts, deletions,
// deferred runs), heartbeats, listens for cancels, delivers webhooks from the push outbox, and drains on request.
import type { Config } from "../config/index.ts";
import { RunQueue } from "../journal/index.ts";
import type { ActorMetrics } from "./metrics.ts";
import type { RunExecutor } from "./run-executor.ts";
import { createQueueReader, type RunQueueReader } from "./shard-queue-readers.ts";
import { WorkerCore, type WorkerOptions } from "./worker-core.ts";

export interface ActorOptions extends WorkerOptions {
  config: Config;
  /** BLOCK of each queue read, ms (default and maximum 2000). */
  blockMs?: number;
  /** Extra time a blocking read may take before the watchdog replaces its connection, ms (default 3000). */
  watchdogMarginMs?: number;
  /** How often retention runs, ms (default 60,000). */
  retentionIntervalMs?: number;
  /** Where runs, reclaims and push deliveries are counted (the entry file reports it to the supervisor). */
  metrics?: ActorMetrics;
}

/** An actor uses three connections: queue reads (blocking), commands (the core's), and the cancel subscription. */
export class Actor {
  /** Worker id, consumer name and run owner: `<host>-<pid>`. */
  readonly workerId: string;
  private readonly core: WorkerCore;
  private readonly executor: RunExecutor;
  private readonly reader: RunQueueReader;
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private stopping: { graceMs: number; reason: string } | undefined;
  private wake: (() => void) | undefined;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: ActorOptions) {
    const { config, logger, metrics } = o;
    this.core = new WorkerCore(config, o, "consume", {
      ...(metrics ? { onRun: (outcome, startedAt) => metrics.run(outcome, startedAt) } : {}),
      // a run's end claims the next queued run in its own script (one node: the script derives that run's keys)
      chainRuns: config.redis.cluster.length === 0,
      // a slot freed (a run ended without a next one, or was handed back): the read loop may read again
      onSettled: () => this.wake?.(),
    });
    this.workerId = this.core.workerId;
    this.executor = this.core.executor;
    const clustered = config.redis.cluster.length > 0;
    this.reader = createQueueReader(clustered, {
      connect: () => o.connect("actor-queue"),
      keys: this.core.keys,
      consumer: this.workerId,
      blockMs: Math.min(o.blockMs ?? 2000, 2000),
      watchdogMarginMs: o.watchdogMarginMs ?? 3000,
      ensureGroups: () => this.core.ensureGroups(),
      // a drain ends the blocking read from the command connection (one node: the same server)
      ...(clustered ? {} : { unblocker: new RunQueue(this.core.redis, this.core.keys) }),
      logger,
    });
  }

  /** Runs until drained; resolves once every run is finished or handed back and the connections are closed. */
  async run(): Promise<void> {
    const { config, logger } = this.o;
    const { core } = this;
    await core.ensureGroups();
    await core.cancels.start();
    await core.heartbeat.start();
    this.every(config.worker.reclaimIntervalSeconds * 1000, () => this.reclaim());
    // Input timeouts, deletions, deferred and lost runs every reclaim interval: what is due should not wait a minute.
    this.every(config.worker.reclaimIntervalSeconds * 1000, () => core.dueWork());
    this.every(this.o.retentionIntervalMs ?? 60_000, () => core.retention());
    logger.info({ workerId: this.workerId, concurrency: config.worker.concurrency }, "actor started");
    core.push.start();
    while (!this.stopping) {
      const free = config.worker.concurrency - this.executor.inflight;
      if (free <= 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      for (const entry of await this.reader.read(free)) this.submit(entry);
    }
    await this.finish();
  }

  /**
   * Stops taking runs; in-flight runs may finish within `graceMs` (default worker.drainSeconds), the rest are handed
   * back to the queue. Idempotent; a later call can only shorten the grace.
   */
  drain(reason: string, graceMs = this.o.config.worker.drainSeconds * 1000): void {
    if (this.stopping && this.stopping.graceMs <= graceMs) return;
    this.stopping = { graceMs, reason };
    this.executor.stopTaking();
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => this.executor.abortAll("drain"), graceMs);
    this.o.logger.info({ reason, inflight: this.executor.inflight, graceMs }, "draining");
    this.wake?.();
    this.reader.interrupt();
  }

  /** Brings the metrics that mirror other counters (push deliveries) up to date. */
  syncMetrics(): void {
    this.o.metrics?.syncPush(this.core.push.counters);
  }

  private submit(entry: Parameters<RunExecutor["submit"]>[0]): void {
    void this.executor.submit(entry);
  }

  /** After the read loop stopped: waits for every run to finish or be handed back (the grace timer aborts the rest). */
  private async finish(): Promise<void> {
    const { logger } = this.o;
    for (const timer of this.timers) clearInterval(timer);
    // Webhook attempts in flight finish and are recorded before the command connection closes.
    await Promise.all([this.executor.settled(), this.core.push.stop()]);
    clearTimeout(this.graceTimer);
    this.reader.close();
    this.core.cancels.close();
    await this.core.heartbeat.remove().catch(() => {});
    await this.core.redis.quit().catch(() => {});
    logger.info({ done: this.executor.done }, "actor stopped");
  }

  private every(ms: number, task: () => Promise<unknown>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.stopping) return;
      busy = true;
      task()
        .catch((error: unknown) => this.o.logger.warn({ err: error }, "periodic task failed"))
        .finally(() => {
          busy = false;
        });
    }, ms);
    this.timers.push(timer);
  }

  private async reclaim(): Promise<void> {
    const free = this.o.config.worker.concurrency - this.executor.inflight;
    // One expired entry per pass: the runs of a dead actor spread over the live actors instead of travelling together,
    // so that a run that kills its actor (a spin, a memory hog) does not take the runs reclaimed with it along to every
    // actor it kills, until their attempts are exhausted with its own.
    const entries = await this.core.reclaimer.reclaim(Math.min(free, 1));
    if (entries.length > 0) this.o.logger.info({ count: entries.length }, "reclaimed queue entries past their lease");
    this.o.metrics?.reclaims.inc(entries.length);
    for (const entry of entries) this.submit(entry);
  }
}
