// The push worker: drains the webhook outbox of every shard for a worker process (never the gateway). Each claim
// covers ONE attempt at the head delivery of a queue (a task's deliveries to one config), settled before the queue can
// be claimed again, so a config's notifications leave in journal order however many workers poll; other configs of
// the same task and other tasks go out in parallel, up to a bound.
import type { Config } from "../config/index.ts";
import { type ClaimedQueue, type DueDelivery, type KeySpace, PushOutbox, type RedisLike } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import { type DeliverDeps, type Delivery, type DeliveryOutcome, deliverOnce } from "./deliver.ts";
import { traceDelivery } from "./delivery-trace.ts";
import type { Connector } from "./http-connector.ts";
import type { Resolver } from "./resolver.ts";
import { type SettlementRules, settlementFor } from "./settlement.ts";
import { signingKey } from "./signature.ts";

export interface PushWorkerDeps {
  redis: RedisLike;
  keys: KeySpace;
  /** Reads push.* (enabled, allowHosts, timeoutSeconds, maxAttempts, retryBaseMs, signingSecrets). */
  config: Config;
  logger: Logger;
  resolve?: Resolver;
  request?: Connector;
  /** Uniform in [0, 1): retry jitter and idle-poll jitter. Default Math.random. */
  random?: () => number;
  /** Queues (a task's deliveries to one config) attempted at once by this worker. Default 16. */
  concurrency?: number;
  /**
   * How long a claim hides a queue from other workers (ms); a worker that dies mid-attempt leaves the queue due again
   * after it. Must exceed the longest attempt (name lookup + request, each up to push.timeoutSeconds).
   * Default 2 × push.timeoutSeconds + 15 s.
   */
  leaseMs?: number;
  /** Ceiling of the first retry's delay (ms); it doubles per attempt up to 5 min. Default push.retryBaseMs. */
  backoffBaseMs?: number;
}

/** What this worker settled since it was made (for metrics). `dropped`: the config was deleted before delivery. */
export interface PushCounters {
  delivered: number;
  retried: number;
  dead: number;
  disabled: number;
  dropped: number;
}

const DEFAULT_CONCURRENCY = 16;
const IDLE_MIN_MS = 100;
const IDLE_MAX_MS = 250;
const TROUBLE_WAIT_MS = 1000;

export class PushWorker {
  private readonly outbox: PushOutbox;
  private readonly deliver: DeliverDeps;
  private readonly rules: SettlementRules;
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly counts: PushCounters = { delivered: 0, retried: 0, dead: 0, disabled: 0, dropped: 0 };
  private readonly inflight = new Set<Promise<void>>();
  private readonly wakers = new Set<() => void>();
  private readonly pumps = new Set<Promise<number>>();
  private nudged = false;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private firstShard = 0;

  /** Throws InvalidSigningSecretError for a malformed `whsec_` secret, so a bad config fails at start. */
  constructor(private readonly deps: PushWorkerDeps) {
    const { push } = deps.config;
    for (const secret of push.signingSecrets) signingKey(secret);
    this.outbox = new PushOutbox(deps.redis, deps.keys);
    this.random = deps.random ?? Math.random;
    this.concurrency = Math.max(1, deps.concurrency ?? DEFAULT_CONCURRENCY);
    this.leaseMs = deps.leaseMs ?? 2 * push.timeoutSeconds * 1000 + 15_000;
    this.deliver = {
      policy: { allowHosts: push.allowHosts },
      secrets: push.signingSecrets,
      timeoutMs: push.timeoutSeconds * 1000,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
      ...(deps.request ? { request: deps.request } : {}),
    };
    this.rules = {
      maxAttempts: Math.max(1, push.maxAttempts),
      backoff: { random: this.random, baseMs: deps.backoffBaseMs ?? push.retryBaseMs },
    };
  }

  /** A copy of the counters. */
  get counters(): PushCounters {
    return { ...this.counts };
  }

  /** Attempts in flight right now. */
  get busy(): number {
    return this.inflight.size;
  }

  /** Starts polling every shard until stop(). Does nothing when push.enabled is false or it already runs. */
  start(): void {
    if (this.loop || !this.deps.config.push.enabled) return;
    this.deps.logger.info({ concurrency: this.concurrency, leaseMs: this.leaseMs }, "push worker started");
    this.loop = this.pump(Number.POSITIVE_INFINITY, true).then(() => {});
  }

  /** Stops claiming (the loop and any tick), waits for the attempts in flight to be settled, then resolves. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.nudge();
    while (this.pumps.size > 0) await Promise.all([...this.pumps]);
    await this.idle();
    if (this.loop) this.deps.logger.info(this.counters, "push worker stopped");
    this.loop = undefined;
    this.stopping = false;
  }

  /**
   * One pass for a sweep or a test: attempts what is due now, again and again, until nothing is due (a retry that
   * is scheduled later stays for a later pass) or `budgetMs` has passed; waits for its attempts. Returns how many
   * queues it claimed (one attempt each).
   */
  async tick(budgetMs = 30_000): Promise<number> {
    if (!this.deps.config.push.enabled) return 0;
    return await this.pump(Date.now() + budgetMs, false);
  }

  private pump(deadline: number, forever: boolean): Promise<number> {
    const running = this.claimUntil(deadline, forever).finally(() => this.pumps.delete(running));
    this.pumps.add(running);
    return running;
  }

  /**
   * Claims and launches attempts until the deadline or stop(); when not `forever`, also until nothing is due or
   * in flight, or Redis fails (the next tick tries again). Then waits for the attempts in flight.
   */
  private async claimUntil(deadline: number, forever: boolean): Promise<number> {
    let claimed = 0;
    while (!this.stopping && Date.now() < deadline) {
      const round = await this.claimRound();
      claimed += round.claimed;
      if (!forever && (round.trouble || (round.claimed === 0 && this.inflight.size === 0))) break;
      if (round.trouble) await this.nap(TROUBLE_WAIT_MS);
      else if (round.claimed === 0 || this.inflight.size >= this.concurrency) {
        await this.nap(IDLE_MIN_MS + Math.floor(this.random() * (IDLE_MAX_MS - IDLE_MIN_MS)));
      }
    }
    await this.idle();
    return claimed;
  }

  /** One claim per shard while slots are free, starting from a rotating shard so that none starves. */
  private async claimRound(): Promise<{ claimed: number; trouble: boolean }> {
    const shards = this.deps.keys.shards;
    const start = this.firstShard;
    this.firstShard = (start + 1) % shards;
    let claimed = 0;
    let trouble = false;
    for (let i = 0; i < shards && !this.stopping; i++) {
      const free = this.concurrency - this.inflight.size;
      if (free <= 0) break;
      const shard = (start + i) % shards;
      try {
        const queues = await this.outbox.claim(shard, free, this.leaseMs);
        for (const queue of queues) this.launch(queue);
        claimed += queues.length;
      } catch (error) {
        trouble = true;
        this.deps.logger.warn({ err: error, shard }, "push outbox claim failed");
      }
    }
    return { claimed, trouble };
  }

  private launch(queue: ClaimedQueue): void {
    const { shard, taskId, configId } = queue;
    const work = configId === undefined ? this.migrate(shard, taskId) : this.attempt(shard, taskId, configId);
    const job: Promise<void> = work
      .catch((error: unknown) => {
        // The claim lapses after leaseMs and the head is attempted again (same webhook-id).
        this.deps.logger.warn({ err: error, taskId, configId }, "push attempt failed before it was settled");
      })
      .finally(() => {
        this.inflight.delete(job);
        this.nudge();
      });
    this.inflight.add(job);
  }

  /** A queue from before the queues per config: its deliveries move to their configs' queues, due at once. */
  private async migrate(shard: number, taskId: string): Promise<void> {
    const moved = await this.outbox.migrate(shard, taskId);
    this.deps.logger.info({ taskId, moved }, "push queue of an earlier version moved to one queue per config");
    this.nudge();
  }

  /** One attempt at the head delivery of a claimed queue, then its settlement (which releases the claim). */
  private async attempt(shard: number, taskId: string, configId: string): Promise<void> {
    const due = await this.outbox.head(shard, taskId, configId);
    if (due === undefined) return;
    const { delivery, config } = due;
    const ids = { taskId, configId: delivery.cfg, webhookId: delivery.id };
    if (config === undefined) {
      if (await this.outbox.settle(due, { outcome: "done" })) this.counts.dropped += 1;
      this.deps.logger.debug(ids, "push config deleted: notification dropped");
      return;
    }
    const notification: Delivery = { id: delivery.id, url: config.url, body: delivery.ev };
    if (config.token !== undefined) notification.token = config.token;
    if (config.authentication !== undefined) notification.authentication = config.authentication;
    const target = { shard, taskId, configId: delivery.cfg };
    const outcome = await traceDelivery(this.outbox, target, notification, (traced) =>
      deliverOnce(traced, this.deliver),
    );
    await this.record(due, outcome, delivery.attempts + 1, ids);
  }

  private async record(
    due: DueDelivery,
    outcome: DeliveryOutcome,
    attempt: number,
    ids: { taskId: string; configId: string; webhookId: string },
  ): Promise<void> {
    const settlement = await settlementFor(outcome, attempt, this.rules, () => this.outbox.now());
    const settled = await this.outbox.settle(due, settlement);
    const status = "status" in outcome ? outcome.status : undefined;
    const line = { ...ids, attempt, outcome: outcome.kind, ...(status === undefined ? {} : { status }) };
    const { logger } = this.deps;
    if (!settled) {
      logger.info(line, "push delivery was settled by another worker meanwhile");
      return;
    }
    switch (settlement.outcome) {
      case "done":
        this.counts.delivered += 1;
        logger.debug(line, "push notification delivered");
        return;
      case "retry":
        this.counts.retried += 1;
        logger.info(
          { ...line, reason: "reason" in outcome ? outcome.reason : "", atMs: settlement.atMs },
          "push retry",
        );
        return;
      case "dead":
        this.counts.dead += 1;
        logger.warn({ ...line, reason: settlement.reason }, "push notification dead-lettered");
        return;
      case "disable":
        this.counts.disabled += 1;
        logger.warn({ ...line, reason: settlement.reason }, "push config disabled by its receiver");
        return;
    }
  }

  private async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight]);
  }

  /** Waits `ms`, or less when an attempt finishes or stop() is called. */
  private nap(ms: number): Promise<void> {
    if (this.nudged || this.stopping) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  private nudge(): void {
    if (this.wakers.size === 0) this.nudged = true;
    for (const wake of [...this.wakers]) wake();
  }
}
