// The supervisor's restart decisions, pure and clock-driven: exponential backoff per slot, and an OTP-style
// intensity limit (at most `intensity` restarts within `periodMs`) beyond which the supervisor gives up.

export type RestartDecision = { action: "restart"; delayMs: number } | { action: "give-up"; restarts: number };

export interface RestartPolicyOptions {
  /** Most restarts allowed within periodMs (0: give up at the first unexpected exit). */
  intensity: number;
  periodMs: number;
  /** Delay before the first restart of a slot; doubles with each quick successive exit (ms). */
  baseDelayMs?: number;
  /** Longest delay between restarts (ms). */
  maxDelayMs?: number;
}

export class RestartPolicy {
  private restarts: number[] = [];
  private readonly failures = new Map<number, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(private readonly o: RestartPolicyOptions) {
    this.baseDelayMs = o.baseDelayMs ?? 250;
    this.maxDelayMs = o.maxDelayMs ?? 30_000;
  }

  /**
   * Decides what to do after the actor of `slot` exited unexpectedly at `nowMs`, having run for `uptimeMs`.
   * An actor that ran for a whole period resets its slot's backoff. With `counted` false (an actor the supervisor
   * killed itself, for a run's fault) the restart is backed off as usual but does not count toward the intensity.
   */
  onExit(slot: number, nowMs: number, uptimeMs: number, counted = true): RestartDecision {
    this.restarts = this.restarts.filter((at) => at > nowMs - this.o.periodMs);
    if (counted) {
      if (this.restarts.length >= this.o.intensity) return { action: "give-up", restarts: this.restarts.length + 1 };
      this.restarts.push(nowMs);
    }
    const failures = uptimeMs >= this.o.periodMs ? 1 : (this.failures.get(slot) ?? 0) + 1;
    this.failures.set(slot, failures);
    return { action: "restart", delayMs: Math.min(this.baseDelayMs * 2 ** (failures - 1), this.maxDelayMs) };
  }
}
