// The sweep (`a2a-runtime sweep --once | --interval S`): a worker without a long-lived consumer. Each tick records a
// heartbeat (mode sweep), reclaims expired leases, runs what is queued up to worker.sweepBatch with the actors' run
// code, delivers the webhooks that are due (within a time budget), and applies retention.
import type { Config } from "../config/index.ts";
import { KeySpace, type QueueEntry, type RedisLike, RunLedger, RunQueue } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import { PushWorker } from "../push/index.ts";
import { CancelListener } from "./cancel-listener.ts";
import type { HandlerRegistry } from "./handlers/handler-api.ts";
import type { ToolRegistry } from "./handlers/tools.ts";
import { Heartbeat } from "./heartbeat.ts";
import { Reclaimer } from "./reclaimer.ts";
import { applyRetention, profileLifetimes, type RetentionReport } from "./retention.ts";
import { RunExecutor } from "./run-executor.ts";

export interface SweepOptions {
  /** One tick, then exit (for cron); otherwise a tick every intervalSeconds until signal aborts. */
  once: boolean;
  /** Seconds between the starts of two ticks (default worker.heartbeatSeconds). */
  intervalSeconds?: number;
  handlers: HandlerRegistry;
  tools: ToolRegistry;
  apiKeys: ReadonlyMap<string, string>;
  logger: Logger;
  connect: (name: string) => RedisLike;
  host: string;
  pid: number;
  version: string;
  /** Aborting it ends the loop after the current tick. */
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** The environment guardrails read the moderation API key from (guardrails.moderation.apiKeyEnv). */
  env?: Readonly<Record<string, string | undefined>>;
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

class Sweep {
  readonly workerId: string;
  private readonly keys: KeySpace;
  private readonly redis: RedisLike;
  private readonly ledger: RunLedger;
  private readonly executor: RunExecutor;
  private readonly reclaimer: Reclaimer;
  readonly heartbeat: Heartbeat;
  readonly cancels: CancelListener;
  private readonly push: PushWorker;

  constructor(
    private readonly config: Config,
    o: SweepOptions,
    private readonly pushBudgetMs: number,
  ) {
    this.workerId = `sweep-${o.host}-${o.pid}`;
    this.keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
    this.redis = o.connect("sweep");
    this.ledger = new RunLedger(this.redis, this.keys, {
      maxRunningTasks: config.clients.maxRunningTasks,
      maxInterruptedTasks: config.clients.maxInterruptedTasks,
    });
    this.executor = new RunExecutor({
      redis: this.redis,
      ledger: this.ledger,
      keys: this.keys,
      config,
      handlers: o.handlers,
      tools: o.tools,
      apiKeys: o.apiKeys,
      consumer: this.workerId,
      logger: o.logger,
      ...(o.fetch ? { fetch: o.fetch } : {}),
      env: o.env,
    });
    this.reclaimer = new Reclaimer(this.redis, this.keys, this.workerId, config.worker.leaseSeconds * 1000);
    this.heartbeat = new Heartbeat({
      redis: this.redis,
      keys: this.keys,
      ledger: this.ledger,
      workerId: this.workerId,
      mode: "sweep",
      host: o.host,
      pid: o.pid,
      version: o.version,
      heartbeatSeconds: config.worker.heartbeatSeconds,
      livenessSeconds: config.worker.livenessSeconds,
      stats: () => ({ inflight: this.executor.inflight, done: this.executor.done }),
      logger: o.logger,
    });
    this.cancels = new CancelListener(
      () => o.connect("sweep-cancel"),
      this.keys.cancelChannel(),
      (runId) => void this.executor.cancel(runId),
      o.logger,
    );
    this.push = new PushWorker({ redis: this.redis, keys: this.keys, config, logger: o.logger });
  }

  async prepare(): Promise<void> {
    for (let shard = 0; shard < this.keys.shards; shard++) await this.ledger.ensureGroup(shard);
  }

  async tick(): Promise<SweepTick> {
    const { sweepBatch, concurrency, livenessSeconds, leaseSeconds } = this.config.worker;
    await this.heartbeat.beat();
    const reclaimed = await this.reclaimer.reclaim(sweepBatch);
    const queued = await this.readQueued(Math.max(0, sweepBatch - reclaimed.length));
    const entries = [...reclaimed, ...queued];
    await runAll(this.executor, entries, concurrency);
    const pushed = await this.push.tick(this.pushBudgetMs);
    const retention = await applyRetention(this.redis, this.keys, {
      budget: sweepBatch,
      ledger: this.ledger,
      lifetimes: profileLifetimes(this.config),
      profiles: this.config.profiles.map((profile) => profile.name),
      consumerIdleMs: Math.max(livenessSeconds, leaseSeconds * 3, 600) * 1000,
      keepConsumers: [this.workerId],
    });
    await this.heartbeat.beat();
    return { reclaimed: reclaimed.length, ran: entries.length, pushed, retention };
  }

  close(): void {
    this.heartbeat.stop();
    this.cancels.close();
    this.redis.disconnect();
  }

  /** Up to `count` new entries per shard, one read per shard: a cluster refuses one read across slots (CROSSSLOT). */
  private async readQueued(count: number): Promise<QueueEntry[]> {
    if (count <= 0) return [];
    const queue = new RunQueue(this.redis, this.keys);
    const shards = Array.from({ length: this.keys.shards }, (_, shard) => shard);
    const replies = await Promise.all(shards.map((shard) => queue.readNew(this.workerId, [shard], count)));
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
    await sweep.prepare();
    await sweep.cancels.start();
    await sweep.heartbeat.start(); // keeps beating while a long run executes inside a tick
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
        logger.info({ workerId: sweep.workerId, ...tick }, "sweep tick");
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
