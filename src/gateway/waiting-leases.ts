// The leases of this process's waiting blocking requests, in the installation-wide ZSET keys.waiting(): one member
// per request, renewed by one process-wide timer, so a gateway that dies leaks its capacity for one TTL at most.

import type { CapacityLeases } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export interface WaitingLeasesOptions {
  leases: CapacityLeases;
  /** keys.waiting() */
  key: string;
  /** Unique per gateway process; prefixes every member. */
  gatewayId: string;
  /** server.maxWaitingRequests, across every gateway. */
  max: number;
  /** Lease lifetime in ms; renewed every third of it. */
  ttlMs: number;
  logger: Logger;
}

export const DEFAULT_WAITING_LEASE_TTL_MS = 15_000;

export class WaitingLeases {
  private readonly held = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: WaitingLeasesOptions) {}

  private member(requestId: string): string {
    return `${this.options.gatewayId}:${requestId}`;
  }

  /** Takes a waiting slot for a request; false when every slot of the installation is taken. */
  async acquire(requestId: string): Promise<boolean> {
    const { leases, key, ttlMs, max } = this.options;
    const member = this.member(requestId);
    if (!(await leases.acquire(key, member, ttlMs, max))) return false;
    this.held.add(member);
    this.timer ??= setInterval(() => this.renewAll(), Math.max(100, Math.floor(ttlMs / 3)));
    return true;
  }

  /** Gives a slot back. Never throws: a lease that cannot be removed lapses after its TTL. */
  async release(requestId: string): Promise<void> {
    const member = this.member(requestId);
    if (!this.held.delete(member)) return;
    if (this.held.size === 0) this.stopTimer();
    await this.options.leases.release(this.options.key, member).catch((error: unknown) => {
      this.options.logger.warn({ err: error }, "waiting lease not released; it lapses after its TTL");
    });
  }

  /** Leases this process holds now. */
  get size(): number {
    return this.held.size;
  }

  /** Releases every lease still held and stops renewing. */
  async stop(): Promise<void> {
    this.stopTimer();
    const members = [...this.held];
    this.held.clear();
    await Promise.all(members.map((member) => this.options.leases.release(this.options.key, member).catch(() => {})));
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Renews every held lease. The calls are issued in one tick on the auto-pipelining command connection, so they
   * travel as one pipeline; a release issued later on the same connection runs after them, so none is resurrected.
   */
  private renewAll(): void {
    const { leases, key, ttlMs, max, logger } = this.options;
    for (const member of this.held) {
      leases
        .acquire(key, member, ttlMs, max)
        .then((renewed) => {
          if (!renewed) logger.warn({ member }, "waiting lease had lapsed and the limit is reached; the wait goes on");
        })
        .catch((error: unknown) => logger.warn({ err: error }, "waiting lease not renewed"));
    }
  }
}
