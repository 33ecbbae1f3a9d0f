// One actor process's work: consumes the run queues of every shard with a consumer group, runs up to
// worker.concurrency runs at once, reclaims expired leases, does the due retention work (input timeouts, deletions,
// deferred runs), heartbeats, listens for cancels, delivers webhooks from the push outbox, and drains on request.
import type { Config } from "../config/index.ts";
import { KeySpace, type RedisLike, RunLedger } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import { PushWorker } from "../push/index.ts";
import { CancelListener } from "./cancel-listener.ts";
import type { HandlerRegistry } from "./handlers/handler-api.ts";
import type { ToolRegistry } from "./handlers/tools.ts";
import { Heartbeat } from "./heartbeat.ts";
import type { ActorMetrics } from "./metrics.ts";
import { Reclaimer } from "./reclaimer.ts";
import { applyDueWork, applyRetention, profileLifetimes } from "./retention.ts";
import { RunExecutor } from "./run-executor.ts";
import { createQueueReader, type RunQueueReader } from "./shard-queue-readers.ts";

export interface ActorOptions {
  config: Config;
  handlers: HandlerRegistry;
  tools: ToolRegistry;
  /** Profile name → API key (resolved by the entry file from the variable the profile names). */
  apiKeys: ReadonlyMap<string, string>;
  logger: Logger;
  /** Opens a new Redis connection; the actor uses three (queue reads, commands, cancel subscription). */
  connect: (name: string) => RedisLike;
  host: string;
  pid: number;
  version: string;
  /** BLOCK of each queue read, ms (default and maximum 2000). */
  blockMs?: number;
  /** Extra time a blocking read may take before the watchdog replaces its connection, ms (default 3000). */
  watchdogMarginMs?: number;
  /** How often retention runs, ms (default 60,000). */
  retentionIntervalMs?: number;
  fetch?: typeof fetch;
  /** The environment guardrails read the moderation API key from (guardrails.moderation.apiKeyEnv). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where runs, reclaims and push deliveries are counted (the entry file reports it to the supervisor). */
  metrics?: ActorMetrics;
}

export class Actor {
  /** Worker id, consumer name and run owner: `<host>-<pid>`. */
  readonly workerId: string;
  private readonly keys: KeySpace;
  private readonly command: RedisLike;
  private readonly ledger: RunLedger;
  private readonly executor: RunExecutor;
  private readonly reader: RunQueueReader;
  private readonly reclaimer: Reclaimer;
  private readonly heartbeat: Heartbeat;
  private readonly cancels: CancelListener;
  /** Drains the webhook outbox of every shard on the command connection (short commands only). */
  private readonly push: PushWorker;
  private readonly timers: ReturnType<typeof setInterval>[] = [];
  private stopping: { graceMs: number; reason: string } | undefined;
  private wake: (() => void) | undefined;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: ActorOptions) {
    const { config, logger } = o;
    this.workerId = `${o.host}-${o.pid}`;
    this.keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
    this.command = o.connect("actor");
    this.ledger = new RunLedger(this.command, this.keys, {
      maxRunningTasks: config.clients.maxRunningTasks,
      maxInterruptedTasks: config.clients.maxInterruptedTasks,
    });
    this.executor = new RunExecutor({
      redis: this.command,
      ledger: this.ledger,
      keys: this.keys,
      config,
      handlers: o.handlers,
      tools: o.tools,
      apiKeys: o.apiKeys,
      consumer: this.workerId,
      logger,
      ...(o.fetch ? { fetch: o.fetch } : {}),
      env: o.env,
      onRun: o.metrics ? (outcome, startedAt) => o.metrics?.run(outcome, startedAt) : undefined,
    });
    this.reader = createQueueReader(config.redis.cluster.length > 0, {
      connect: () => o.connect("actor-queue"),
      keys: this.keys,
      consumer: this.workerId,
      blockMs: Math.min(o.blockMs ?? 2000, 2000),
      watchdogMarginMs: o.watchdogMarginMs ?? 3000,
      ensureGroups: () => this.ensureGroups(),
      logger,
    });
    this.reclaimer = new Reclaimer(this.command, this.keys, this.workerId, config.worker.leaseSeconds * 1000);
    this.heartbeat = new Heartbeat({
      redis: this.command,
      keys: this.keys,
      ledger: this.ledger,
      workerId: this.workerId,
      mode: "consume",
      host: o.host,
      pid: o.pid,
      version: o.version,
      heartbeatSeconds: config.worker.heartbeatSeconds,
      livenessSeconds: config.worker.livenessSeconds,
      stats: () => ({ inflight: this.executor.inflight, done: this.executor.done }),
      logger,
    });
    this.cancels = new CancelListener(
      () => o.connect("actor-cancel"),
      this.keys.cancelChannel(),
      (runId) => {
        if (this.executor.cancel(runId)) logger.info({ runId }, "cancel requested: run aborted");
      },
      logger,
    );
    this.push = new PushWorker({ redis: this.command, keys: this.keys, config, logger });
  }

  /** Runs until drained; resolves once every run is finished or handed back and the connections are closed. */
  async run(): Promise<void> {
    const { config, logger } = this.o;
    await this.ensureGroups();
    await this.cancels.start();
    await this.heartbeat.start();
    this.every(config.worker.reclaimIntervalSeconds * 1000, () => this.reclaim());
    this.every(config.worker.reclaimIntervalSeconds * 1000, () => this.dueWork());
    this.every(this.o.retentionIntervalMs ?? 60_000, () => this.retention());
    logger.info({ workerId: this.workerId, concurrency: config.worker.concurrency }, "actor started");
    this.push.start();
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
  }

  /** Brings the metrics that mirror other counters (push deliveries) up to date. */
  syncMetrics(): void {
    this.o.metrics?.syncPush(this.push.counters);
  }

  private submit(entry: Parameters<RunExecutor["submit"]>[0]): void {
    void this.executor.submit(entry).then(() => this.wake?.());
  }

  /** After the read loop stopped: waits for every run to finish or be handed back (the grace timer aborts the rest). */
  private async finish(): Promise<void> {
    const { logger } = this.o;
    for (const timer of this.timers) clearInterval(timer);
    // Webhook attempts in flight finish and are recorded before the command connection closes.
    await Promise.all([this.executor.settled(), this.push.stop()]);
    clearTimeout(this.graceTimer);
    this.reader.close();
    this.cancels.close();
    await this.heartbeat.remove().catch(() => {});
    await this.command.quit().catch(() => {});
    logger.info({ done: this.executor.done }, "actor stopped");
  }

  private async ensureGroups(): Promise<void> {
    for (let shard = 0; shard < this.keys.shards; shard++) await this.ledger.ensureGroup(shard);
  }

  private every(ms: number, task: () => Promise<void>): void {
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
    const entries = await this.reclaimer.reclaim(Math.min(free, 1));
    if (entries.length > 0) this.o.logger.info({ count: entries.length }, "reclaimed queue entries past their lease");
    this.o.metrics?.reclaims.inc(entries.length);
    for (const entry of entries) this.submit(entry);
  }

  /**
   * Input timeouts, deletions, deferred runs and runs whose queue entry was lost, every reclaim interval: what is due
   * should not wait a minute.
   */
  private async dueWork(): Promise<void> {
    const report = await applyDueWork(this.command, this.keys, {
      budget: this.o.config.worker.sweepBatch,
      ledger: this.ledger,
      lifetimes: profileLifetimes(this.o.config),
      profiles: this.o.config.profiles.map((profile) => profile.name),
    });
    if (report.lostRunsQueued > 0) {
      this.o.logger.warn({ count: report.lostRunsQueued }, "runs whose queue entry was gone queued again");
    }
  }

  private async retention(): Promise<void> {
    const { config } = this.o;
    const { worker } = config;
    await applyRetention(this.command, this.keys, {
      budget: worker.sweepBatch,
      ledger: this.ledger,
      lifetimes: profileLifetimes(config),
      profiles: config.profiles.map((profile) => profile.name),
      consumerIdleMs: Math.max(worker.livenessSeconds, worker.leaseSeconds * 3, 600) * 1000,
      keepConsumers: [this.workerId],
    });
  }
}
