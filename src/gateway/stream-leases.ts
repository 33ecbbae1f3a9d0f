// The leases of this process's SSE streams: one member per stream in the installation's set and in its client's and
// task's sets (in the client's shard), renewed by one process-wide timer, so a gateway that dies leaks them for one
// TTL at most. Acquiring takes the installation lease, then the shard leases, and gives back what it took on refusal
// (a new task's stream on one node takes the installation's and the client's leases in one script).

import { type CapacityLeases, type KeySpace, storeFailure } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import { CapacityError, REFUSAL_REASONS } from "../protocol/index.ts";

export interface StreamLimits {
  /** server.maxStreamsPerTask, server.maxStreamsPerClient, server.maxStreamsPerInstallation */
  readonly perTask: number;
  readonly perClient: number;
  readonly perInstallation: number;
}

export interface StreamLeasesOptions {
  leases: CapacityLeases;
  keys: KeySpace;
  /** Unique per gateway process; prefixes every member. */
  gatewayId: string;
  limits: StreamLimits;
  /** Lease lifetime in ms; renewed every third of it. */
  ttlMs: number;
  retryAfterSeconds: number;
  logger: Logger;
}

export const DEFAULT_STREAM_LEASE_TTL_MS = 20_000;

/** One stream's leases. `taskId` is unset until the task exists (a new task's stream leases it after accept). */
export interface StreamLease {
  readonly member: string;
  readonly clientId: string;
  taskId: string | undefined;
}

type Limit = keyof StreamLimits;

/** How often a slice of the leases is renewed (ms). */
const RENEW_TICK_MS = 250;

export class StreamLeases {
  private readonly held = new Set<StreamLease>();
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Where the next renewal slice starts, in the order leases were taken. */
  private cursor = 0;

  constructor(private readonly options: StreamLeasesOptions) {}

  /** Takes a stream's leases (the task's when `taskId` is given); throws a CapacityError naming the limit. */
  async acquire(requestId: string, clientId: string, taskId: string | undefined): Promise<StreamLease> {
    const { leases, keys, ttlMs, limits } = this.options;
    const lease: StreamLease = { member: `${this.options.gatewayId}:${requestId}`, clientId, taskId: undefined };
    if (taskId === undefined && leases.pairsAcrossSlots) {
      // a new task's stream on one node: the installation's lease and the client's in one script, both or neither
      const sets = { first: keys.streams(), second: keys.clientStreams(keys.shardOf(clientId), clientId) };
      const max = { first: limits.perInstallation, second: limits.perClient };
      const held = await leases.acquirePair(sets, lease.member, ttlMs, max).catch(storeFailure);
      if (held === "firstFull") throw this.refusal("perInstallation");
      if (held === "secondFull") throw this.refusal("perClient");
      return this.hold(lease);
    }
    const installed = await leases
      .acquire(keys.streams(), lease.member, ttlMs, limits.perInstallation)
      .catch(storeFailure);
    if (!installed) throw this.refusal("perInstallation");
    try {
      if (taskId === undefined) {
        const key = keys.clientStreams(keys.shardOf(clientId), clientId);
        const held = await leases.acquire(key, lease.member, ttlMs, limits.perClient).catch(storeFailure);
        if (!held) throw this.refusal("perClient");
      } else {
        await this.attachTask(lease, taskId, true);
      }
    } catch (error) {
      await this.removeAll(lease, taskId);
      throw error;
    }
    return this.hold(lease);
  }

  private hold(lease: StreamLease): StreamLease {
    this.held.add(lease);
    this.timer ??= setInterval(() => this.renewSlice(), RENEW_TICK_MS);
    return lease;
  }

  /**
   * Adds the task's lease (and takes or renews the client's). `limited: false` is for the task this very stream
   * created: nobody else can hold a stream on it, so its limit cannot refuse and nothing stored is left behind.
   */
  async attachTask(lease: StreamLease, taskId: string, limited: boolean): Promise<void> {
    const held = await this.shardLease(lease, taskId, limited ? this.options.limits.perTask : 0);
    if (held === "taskFull") throw this.refusal("perTask", { taskId });
    if (held === "clientFull") throw this.refusal("perClient");
    lease.taskId = taskId;
  }

  /** Gives a stream's leases back. Never throws: a lease that cannot be removed lapses after its TTL. */
  async release(lease: StreamLease): Promise<void> {
    if (!this.held.delete(lease)) return;
    if (this.held.size === 0) this.stopTimer();
    await this.removeAll(lease, lease.taskId);
  }

  /** Streams holding leases in this process. */
  get size(): number {
    return this.held.size;
  }

  /** Releases every lease still held and stops renewing. */
  async stop(): Promise<void> {
    this.stopTimer();
    const all = [...this.held];
    this.held.clear();
    await Promise.all(all.map((lease) => this.removeAll(lease, lease.taskId)));
  }

  private async shardLease(
    lease: StreamLease,
    taskId: string,
    maxPerTask: number,
  ): Promise<"held" | "taskFull" | "clientFull"> {
    const { leases, keys, ttlMs, limits } = this.options;
    const shard = keys.shardOf(lease.clientId);
    const sets = {
      taskStreams: keys.taskStreams(shard, taskId),
      clientStreams: keys.clientStreams(shard, lease.clientId),
    };
    return await leases
      .acquireStream(sets, lease.member, ttlMs, { perTask: maxPerTask, perClient: limits.perClient })
      .catch(storeFailure);
  }

  private async removeAll(lease: StreamLease, taskId: string | undefined): Promise<void> {
    const { leases, keys, logger } = this.options;
    const shard = keys.shardOf(lease.clientId);
    const sets = [keys.streams(), keys.clientStreams(shard, lease.clientId)];
    if (taskId !== undefined) sets.push(keys.taskStreams(shard, taskId));
    await Promise.all(sets.map((key) => leases.release(key, lease.member))).catch((error: unknown) => {
      logger.warn({ err: error }, "stream lease not released; it lapses after its TTL");
    });
  }

  private refusal(limit: Limit, metadata: Record<string, string> = {}): CapacityError {
    const max = this.options.limits[limit];
    const what = { perTask: "This task has", perClient: "This client has", perInstallation: "This installation has" };
    const reason = {
      perTask: REFUSAL_REASONS.streamsPerTask,
      perClient: REFUSAL_REASONS.streamsPerClient,
      perInstallation: REFUSAL_REASONS.streamsPerInstallation,
    };
    return new CapacityError(
      reason[limit],
      `${what[limit]} ${max} open streams already; retry later, or poll with GetTask`,
      this.options.retryAfterSeconds,
      { limit: String(max), ...metadata },
    );
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Renews a slice of the held leases each tick, so that every lease is renewed once per third of its TTL without
   * sending them all at once (10,000 streams would otherwise put 20,000 scripts on the shared connection together
   * and stall every stream's events behind them).
   */
  private renewSlice(): void {
    const all = [...this.held];
    if (all.length === 0) return;
    const ticksPerRound = Math.max(1, Math.floor(this.options.ttlMs / 3 / RENEW_TICK_MS));
    const count = Math.ceil(all.length / ticksPerRound);
    if (this.cursor >= all.length) this.cursor = 0;
    const slice = all.slice(this.cursor, this.cursor + count);
    this.cursor += count;
    this.renew(slice);
  }

  /** Renews leases: one script call per lease, issued in one tick and sent as issued. */
  private renew(slice: readonly StreamLease[]): void {
    const { leases, keys, ttlMs, limits, logger } = this.options;
    const warn = (error: unknown) => logger.warn({ err: error }, "stream lease not renewed");
    for (const lease of slice) {
      leases
        .acquire(keys.streams(), lease.member, ttlMs, limits.perInstallation)
        .then((renewed) => {
          if (!renewed) logger.warn({ member: lease.member }, "stream lease had lapsed and the limit is reached");
        })
        .catch(warn);
      const shard = keys.shardOf(lease.clientId);
      const renewal =
        lease.taskId === undefined
          ? leases.acquire(keys.clientStreams(shard, lease.clientId), lease.member, ttlMs, limits.perClient)
          : this.shardLease(lease, lease.taskId, limits.perTask).then((held) => held === "held");
      renewal
        .then((renewed) => {
          if (!renewed) logger.warn({ member: lease.member }, "stream lease had lapsed and the limit is reached");
        })
        .catch(warn);
    }
  }
}
