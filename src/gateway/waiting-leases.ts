// The leases of this process's waiting blocking requests: one member per request in the installation-wide ZSET
// keys.waiting() and in the client's own ZSET keys.clientWaiting(), both renewed by one process-wide timer, so a
// gateway that dies leaks its capacity for one TTL at most, and no client can hold every waiting slot.

import type { CapacityLeases, KeySpace, WaitingLeaseRequest } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export interface WaitingLeasesOptions {
  leases: CapacityLeases;
  keys: KeySpace;
  /** Unique per gateway process; prefixes every member. */
  gatewayId: string;
  /** server.maxWaitingRequests, across every gateway. */
  max: number;
  /** The share of one client (clients.maxWaitingRequests, or half of max), across every gateway. */
  maxPerClient: number;
  /** Lease lifetime in ms; renewed every third of it. */
  ttlMs: number;
  logger: Logger;
}

export const DEFAULT_WAITING_LEASE_TTL_MS = 15_000;

/** Why a waiting slot was not given: the installation's slots or the client's share are all taken. */
export type WaitingRefusal = "installation" | "client";

export class WaitingLeases {
  /** member → the client's key it also holds. */
  private readonly held = new Map<string, string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: WaitingLeasesOptions) {}

  private clientKey(clientId: string): string {
    const { keys } = this.options;
    return keys.clientWaiting(keys.shardOf(clientId), clientId);
  }

  private member(requestId: string): string {
    return `${this.options.gatewayId}:${requestId}`;
  }

  /**
   * Takes a waiting slot for a client's request; otherwise says which limit is reached (the client's share first). On
   * one node both leases are one script; on a Cluster the two sets live in different slots: the client's lease, then
   * the installation's, the first given back when the second is refused.
   */
  async acquire(requestId: string, clientId: string): Promise<WaitingRefusal | undefined> {
    const member = this.member(requestId);
    const clientKey = this.clientKey(clientId);
    const refused = this.options.leases.pairsAcrossSlots
      ? await this.acquireBoth(clientKey, member)
      : await this.acquireOneByOne(clientKey, member);
    if (refused) return refused;
    this.hold(member, clientKey);
    return undefined;
  }

  /**
   * The waiting leases of a request for the accept script to take with its new task, in the same step, or undefined on
   * a Cluster (the installation's set is in no shard's slot: `acquire` then). The lease counts as held from now on, so
   * that `release` gives it back whatever the accept answers (a refused accept wrote none: the release is a no-op). The
   * run of a task so accepted gives the leases back at the end of its leg and sends the task to this gateway (see
   * JournalTail); the request then only `forget`s them.
   */
  joinAccept(requestId: string, clientId: string): WaitingLeaseRequest | undefined {
    const { leases, keys, ttlMs, max, maxPerClient } = this.options;
    if (!leases.pairsAcrossSlots) return undefined;
    const member = this.member(requestId);
    const clientKey = this.clientKey(clientId);
    this.hold(member, clientKey);
    return {
      member,
      clientKey,
      installationKey: keys.waiting(),
      ttlMs,
      maxClient: maxPerClient,
      maxInstallation: max,
    };
  }

  private hold(member: string, clientKey: string): void {
    this.held.set(member, clientKey);
    this.timer ??= setInterval(() => this.renewAll(), Math.max(100, Math.floor(this.options.ttlMs / 3)));
  }

  private async acquireBoth(clientKey: string, member: string): Promise<WaitingRefusal | undefined> {
    const { leases, keys, ttlMs, max, maxPerClient } = this.options;
    const sets = { first: clientKey, second: keys.waiting() };
    const held = await leases.acquirePair(sets, member, ttlMs, { first: maxPerClient, second: max });
    return held === "firstFull" ? "client" : held === "secondFull" ? "installation" : undefined;
  }

  private async acquireOneByOne(clientKey: string, member: string): Promise<WaitingRefusal | undefined> {
    const { leases, keys, ttlMs, max, maxPerClient } = this.options;
    if (!(await leases.acquire(clientKey, member, ttlMs, maxPerClient))) return "client";
    let installed = false;
    try {
      installed = await leases.acquire(keys.waiting(), member, ttlMs, max);
    } finally {
      if (!installed) await this.releaseQuietly(clientKey, member);
    }
    return installed ? undefined : "installation";
  }

  /** Gives a slot back. Never throws: a lease that cannot be removed lapses after its TTL. */
  async release(requestId: string): Promise<void> {
    const member = this.member(requestId);
    const clientKey = this.held.get(member);
    if (clientKey === undefined) return;
    this.held.delete(member);
    if (this.held.size === 0) this.stopTimer();
    await Promise.all([
      this.releaseQuietly(this.options.keys.waiting(), member),
      this.releaseQuietly(clientKey, member),
    ]);
  }

  /** Forgets a request's leases without a call: the run's end gave them back (see `joinAccept`). */
  forget(requestId: string): void {
    if (!this.held.delete(this.member(requestId))) return;
    if (this.held.size === 0) this.stopTimer();
  }

  /** Leases this process holds now. */
  get size(): number {
    return this.held.size;
  }

  /** Releases every lease still held and stops renewing. */
  async stop(): Promise<void> {
    this.stopTimer();
    const all = [...this.held];
    this.held.clear();
    const waiting = this.options.keys.waiting();
    await Promise.all(
      all.flatMap(([member, clientKey]) => [
        this.releaseQuietly(waiting, member),
        this.releaseQuietly(clientKey, member),
      ]),
    );
  }

  private async releaseQuietly(key: string, member: string): Promise<void> {
    await this.options.leases.release(key, member).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "waiting lease not released; it lapses after its TTL");
    });
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Renews every held lease that is still live, and never takes one again: the run's end gives a new task's leases
   * back itself (its accept took them) before this process hears of it, and a renewal must not bring them back. The
   * calls are issued in one tick on the command connection, which runs commands in the order they were sent: a release
   * issued later on the same connection runs after them.
   */
  private renewAll(): void {
    const { leases, keys, ttlMs, logger } = this.options;
    const warn = (error: unknown) => logger.warn({ err: error }, "waiting lease not renewed");
    const gone = (member: string) => (renewed: boolean) => {
      if (!renewed) logger.debug({ member }, "waiting lease given back by the run's end, or lapsed: not renewed");
    };
    for (const [member, clientKey] of this.held) {
      leases.renew(keys.waiting(), member, ttlMs).then(gone(member)).catch(warn);
      leases.renew(clientKey, member, ttlMs).then(gone(member)).catch(warn);
    }
  }
}
