// What every worker process is built of, whether it consumes the queues (Actor) or ticks (Sweep): its command
// connection, run ledger, run executor, reclaimer, heartbeat, cancel listener and push worker, wired the same way,
// and the retention work both apply. The loops that drive them (blocking reads, or ticks) stay with each worker.
import type { Config } from "../config/index.ts";
import { KeySpace, type RedisLike, RunLedger } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import { PushWorker } from "../push/index.ts";
import { CancelListener } from "./cancel-listener.ts";
import type { HandlerRegistry } from "./handlers/handler-api.ts";
import type { ToolRegistry } from "./handlers/tools.ts";
import { Heartbeat, type WorkerMode } from "./heartbeat.ts";
import { Reclaimer } from "./reclaimer.ts";
import {
  applyDueWork,
  applyRetention,
  type DueWorkReport,
  profileLifetimes,
  type RetentionReport,
} from "./retention.ts";
import { type ExecutorOptions, RunExecutor } from "./run-executor.ts";

/** What a worker is given by its entry file. */
export interface WorkerOptions {
  handlers: HandlerRegistry;
  tools: ToolRegistry;
  /** Profile name → API key (resolved by the entry file from the variable the profile names). */
  apiKeys: ReadonlyMap<string, string>;
  logger: Logger;
  /** Opens a new Redis connection (named for the logs and CLIENT LIST). */
  connect: (name: string) => RedisLike;
  host: string;
  pid: number;
  version: string;
  fetch?: typeof fetch;
  /** The environment guardrails read the moderation API key from (guardrails.moderation.apiKeyEnv). */
  env?: Readonly<Record<string, string | undefined>>;
}

export class WorkerCore {
  /** Worker id, consumer name and run owner: `<host>-<pid>` for an actor, `sweep-<host>-<pid>` for a sweep. */
  readonly workerId: string;
  readonly keys: KeySpace;
  /** The command connection: ledger writes, task reads, reclaims, retention, heartbeats, webhooks. */
  readonly redis: RedisLike;
  readonly ledger: RunLedger;
  readonly executor: RunExecutor;
  readonly reclaimer: Reclaimer;
  readonly heartbeat: Heartbeat;
  readonly cancels: CancelListener;
  /** Drains the webhook outbox of every shard on the command connection (short commands only). */
  readonly push: PushWorker;
  private readonly logger: Logger;

  constructor(
    private readonly config: Config,
    o: WorkerOptions,
    mode: WorkerMode,
    runs: Pick<ExecutorOptions, "onRun" | "chainRuns" | "onSettled"> = {},
  ) {
    const name = mode === "consume" ? "actor" : "sweep";
    this.workerId = mode === "consume" ? `${o.host}-${o.pid}` : `sweep-${o.host}-${o.pid}`;
    this.keys = new KeySpace(config.redis.keyPrefix, config.redis.shards);
    this.logger = o.logger;
    this.redis = o.connect(name);
    this.ledger = new RunLedger(this.redis, this.keys, {
      maxRunningTasks: config.clients.maxRunningTasks,
      maxInterruptedTasks: config.clients.maxInterruptedTasks,
      maxTaskBytes: config.worker.maxTaskBytes,
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
      ...runs,
    });
    this.reclaimer = new Reclaimer(this.redis, this.keys, this.workerId, config.worker.leaseSeconds * 1000);
    this.heartbeat = new Heartbeat({
      redis: this.redis,
      keys: this.keys,
      ledger: this.ledger,
      workerId: this.workerId,
      mode,
      host: o.host,
      pid: o.pid,
      version: o.version,
      heartbeatSeconds: config.worker.heartbeatSeconds,
      livenessSeconds: config.worker.livenessSeconds,
      stats: () => ({ inflight: this.executor.inflight, done: this.executor.done }),
      logger: o.logger,
    });
    this.cancels = new CancelListener(
      () => o.connect(`${name}-cancel`),
      this.keys.cancelChannel(),
      (runId) => {
        if (this.executor.cancel(runId)) o.logger.info({ runId }, "cancel requested: run aborted");
      },
      o.logger,
    );
    this.push = new PushWorker({ redis: this.redis, keys: this.keys, config, logger: o.logger });
  }

  /** Creates every shard's consumer group (and queue) when missing. */
  async ensureGroups(): Promise<void> {
    for (let shard = 0; shard < this.keys.shards; shard++) await this.ledger.ensureGroup(shard);
  }

  /** Input timeouts, deletions, deferred runs and runs whose queue entry was lost: the due part of retention. */
  async dueWork(): Promise<DueWorkReport> {
    const report = await applyDueWork(this.redis, this.keys, {
      budget: this.config.worker.sweepBatch,
      ledger: this.ledger,
      lifetimes: profileLifetimes(this.config),
      profiles: this.config.profiles.map((profile) => profile.name),
    });
    if (report.lostRunsQueued > 0) {
      this.logger.warn({ count: report.lostRunsQueued }, "runs whose queue entry was gone queued again");
    }
    return report;
  }

  /** The whole retention pass: the due work, stale index entries, old dead letters and idle consumers (not this one). */
  async retention(): Promise<RetentionReport> {
    const { worker } = this.config;
    return await applyRetention(this.redis, this.keys, {
      budget: worker.sweepBatch,
      ledger: this.ledger,
      lifetimes: profileLifetimes(this.config),
      profiles: this.config.profiles.map((profile) => profile.name),
      consumerIdleMs: Math.max(worker.livenessSeconds, worker.leaseSeconds * 3, 600) * 1000,
      keepConsumers: [this.workerId],
    });
  }
}
