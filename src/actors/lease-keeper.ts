// Keeps one run's lease alive while it runs: renews every third of the lease and reports a cancel request or a
// lost lease. A renewal that fails on the connection is retried at the next tick; the lease covers the gap. A keeper
// started a third of a lease or more after the claim renews at once: the run's first read may have waited on Redis
// (paused, restarting) past the lease, and a lapsed lease invites another actor to start the run over.
import type { Claim, RunLedger } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export interface LeaseEvents {
  cancel(): void;
  lost(): void;
}

export class LeaseKeeper {
  private timer: ReturnType<typeof setInterval> | undefined;
  private busy = false;

  constructor(
    private readonly ledger: RunLedger,
    private readonly claim: Claim,
    private readonly leaseMs: number,
    private readonly consumer: string,
    private readonly events: LeaseEvents,
    private readonly logger: Logger,
  ) {}

  /** Starts renewing; `claimedAt` is performance.now() when the claim that took the lease was sent. */
  start(claimedAt: number): this {
    const everyMs = Math.max(100, Math.floor(this.leaseMs / 3));
    this.timer = setInterval(() => void this.renew(), everyMs);
    if (performance.now() - claimedAt >= everyMs) void this.renew();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async renew(): Promise<void> {
    if (this.busy || !this.timer) return;
    this.busy = true;
    try {
      const answer = await this.ledger.renew(this.claim, this.leaseMs, this.consumer);
      if (!this.timer) return;
      if (answer === "cancel") this.events.cancel();
      else if (answer === "lost") {
        this.stop();
        this.events.lost();
      }
    } catch (error) {
      this.logger.warn({ err: error, taskId: this.claim.taskId }, "lease renewal failed; retrying");
    } finally {
      this.busy = false;
    }
  }
}
