// The supervisor's restart decisions, pure and clock-driven: why an actor exited, exponential backoff per slot, and an
// OTP-style intensity limit (at most `intensity` counted restarts within `periodMs`) beyond which it gives up.
import type { KillReason } from "./watchdog.ts";

/** What an actor was doing, as its messages told the supervisor: loading, up with no handler running, or running one. */
export type ActorActivity = "starting" | "idle" | "busy";

/**
 * Why an actor exited: `startup` (before it was up: it cannot work), `idle` (up, no handler running: something other
 * than a run is wrong), `run` (a handler was running: a run killed it), or a watchdog kill of an actor that was up.
 */
export type ExitCause = "startup" | "idle" | "run" | KillReason;

/** The cause of an exit: an actor that never got up failed at start, whatever ended it. */
export function exitCause(activity: ActorActivity, killedFor: KillReason | undefined): ExitCause {
  if (activity === "starting") return "startup";
  if (killedFor !== undefined) return killedFor;
  return activity === "busy" ? "run" : "idle";
}

/**
 * Whether the exit counts toward the restart intensity. A run's exits (a crash while a handler ran, a watchdog kill)
 * do not: they are bounded per run by worker.maxAttempts, and counting them would let runs stop the whole fleet.
 */
export function countsTowardIntensity(cause: ExitCause): boolean {
  return cause === "startup" || cause === "idle";
}

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
   * An actor that ran for a whole period resets its slot's backoff. With `counted` false (a run's fault, see
   * countsTowardIntensity) the restart is backed off as usual but does not count toward the intensity.
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
