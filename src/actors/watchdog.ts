// The supervisor's watchdog over its actors: one that sent nothing on its pipe for worker.stallSeconds (its event loop
// is stuck) or whose resident memory is above worker.actorMaxMemoryMb is to be killed. Decisions only, clock-driven;
// the supervisor sends the signal.
import { readFileSync } from "node:fs";
import type { ActorMessage } from "./actor-message.ts";

/**
 * Silence allowed to an actor that has not said it is ready (ms), when longer than the stall limit: loading its code
 * and handler modules blocks its event loop for seconds on a busy host.
 */
export const STARTUP_SILENCE_MS = 30_000;

export type KillReason = "stalled" | "memory";

/** An actor to kill now, with the figure that condemned it. */
export interface KillVerdict {
  readonly slot: number;
  readonly pid: number;
  readonly reason: KillReason;
  /** How long the actor has been silent (ms). */
  readonly silentMs: number;
  /** Its resident memory (bytes), when known. */
  readonly rssBytes: number | undefined;
}

export interface WatchdogOptions {
  /** Silence after which an actor is stalled (ms). */
  stallMs: number;
  /** Resident memory above which an actor is killed (bytes); 0 = no limit. */
  maxRssBytes: number;
  /** Silence allowed before the actor is ready (ms; default STARTUP_SILENCE_MS, never below stallMs). */
  startupMs?: number;
  /** An actor's resident memory read from outside the process (bytes), or undefined where that is not possible. */
  readRss?: (pid: number) => number | undefined;
}

interface Watched {
  pid: number;
  lastSeenMs: number;
  /** The RSS the actor reported in its latest ping (bytes). */
  reportedRss: number | undefined;
  ready: boolean;
  condemned: boolean;
}

/**
 * An actor's resident memory from /proc/<pid>/status (VmRSS, kB) on Linux: the kernel answers even while the actor's
 * event loop is blocked. Undefined elsewhere, or when the process is gone.
 */
export function procRss(pid: number): number | undefined {
  if (process.platform !== "linux") return undefined;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class ActorWatchdog {
  private readonly actors = new Map<number, Watched>();
  private readonly readRss: (pid: number) => number | undefined;
  private readonly startupMs: number;

  constructor(private readonly o: WatchdogOptions) {
    this.readRss = o.readRss ?? procRss;
    this.startupMs = Math.max(o.startupMs ?? STARTUP_SILENCE_MS, o.stallMs);
  }

  /** Starts watching the actor of `slot` (just spawned: its silence counts from now). */
  watch(slot: number, pid: number, nowMs: number): void {
    this.actors.set(slot, { pid, lastSeenMs: nowMs, reportedRss: undefined, ready: false, condemned: false });
  }

  /** The actor of `slot` sent a message: any message shows its event loop turns; a ping carries its RSS. */
  seen(slot: number, nowMs: number, message: ActorMessage): void {
    const actor = this.actors.get(slot);
    if (!actor) return;
    actor.lastSeenMs = nowMs;
    if (message.kind === "alive") actor.reportedRss = message.rssBytes;
    else if (message.kind === "ready") actor.ready = true;
  }

  /** Stops watching the actor of `slot` (it exited). */
  forget(slot: number): void {
    this.actors.delete(slot);
  }

  /** The actors to kill now; each is named once (the supervisor forgets it when it exits). */
  check(nowMs: number): KillVerdict[] {
    const verdicts: KillVerdict[] = [];
    for (const [slot, actor] of this.actors) {
      if (actor.condemned) continue;
      const silentMs = nowMs - actor.lastSeenMs;
      const rssBytes = this.readRss(actor.pid) ?? actor.reportedRss;
      let reason: KillReason | undefined;
      if (this.o.maxRssBytes > 0 && rssBytes !== undefined && rssBytes > this.o.maxRssBytes) reason = "memory";
      else if (silentMs >= (actor.ready ? this.o.stallMs : this.startupMs)) reason = "stalled";
      if (reason === undefined) continue;
      actor.condemned = true;
      verdicts.push({ slot, pid: actor.pid, reason, silentMs, rssBytes });
    }
    return verdicts;
  }
}
