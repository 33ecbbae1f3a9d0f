// The supervisor (`a2a-runtime work`): starts N actor processes, restarts one that exits with exponential backoff,
// gives up past the restart-intensity limit (like OTP) counting only exits that no run caused, kills an actor that
// stalls or outgrows its memory limit (its watchdog), and drains every actor on SIGTERM/SIGINT. It never touches Redis;
// an actor whose supervisor dies sees its stdin close and exits by itself.
import { type ChildProcess, spawn } from "node:child_process";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { keepFreedMemory } from "../allocator.ts";
import type { Config } from "../config/index.ts";
import type { Logger } from "../log.ts";
import { readActorMessages } from "./actor-message.ts";
import { ACTOR_PIPE_FD, ACTOR_PIPE_FD_ENV } from "./actor-pipe.ts";
import { SupervisorMetrics } from "./metrics-server.ts";
import { type ActorActivity, countsTowardIntensity, exitCause, RestartPolicy } from "./restart-policy.ts";
import { ActorWatchdog, type KillReason, type KillVerdict } from "./watchdog.ts";

export interface SupervisorOptions {
  /** Actor processes to keep running (default worker.actors). */
  actors?: number;
  /** The actors' environment (API keys are read from it by each actor). */
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** Handler modules each actor loads besides the built-ins (see docs/handlers.md). */
  handlerModules?: readonly string[];
  /** The command that starts one actor; default: this runtime running src/actors/main.ts. */
  actorCommand?: readonly string[];
  /** Install SIGTERM/SIGINT handlers that drain (default true). */
  handleSignals?: boolean;
  /** Aborting it drains, like SIGTERM. */
  signal?: AbortSignal;
}

/** The first line an actor reads on stdin. */
export interface ActorStart {
  config: Config;
  handlerModules: string[];
}

/** How long after the drain timeout the supervisor waits before it kills actors that did not exit (ms). */
const KILL_MARGIN_MS = 10_000;
/** How often the watchdog looks at every actor (ms). */
const WATCH_INTERVAL_MS = 1000;
/**
 * How long after an actor's exit the supervisor waits for the rest of its pipe (ms): the exit can be reported before
 * the last lines are read, and a "busy" among them decides how the exit counts. A process the actor started may hold
 * the pipe open; then the supervisor decides on what it has read by then.
 */
const PIPE_DRAIN_MS = 2000;
const MIB = 1024 * 1024;

export function defaultActorCommand(): string[] {
  const entry = fileURLToPath(new URL("./main.ts", import.meta.url));
  return "Deno" in globalThis ? [process.execPath, "run", "-A", entry] : [process.execPath, entry];
}

class Supervisor {
  private readonly children: (ChildProcess | undefined)[];
  private readonly restartTimers = new Map<number, ReturnType<typeof setTimeout>>();
  private readonly policy: RestartPolicy;
  private draining = false;
  private gaveUp = false;
  private killTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly watchdog: ActorWatchdog;
  private watchTimer: ReturnType<typeof setInterval> | undefined;
  /** Actors the watchdog killed, with the reason. */
  private readonly killed = new WeakMap<ChildProcess, KillReason>();
  /** What each actor was doing, from its pipe: an actor that dies busy died of a run (see restart-policy.ts). */
  private readonly activity = new WeakMap<ChildProcess, ActorActivity>();
  private finished: ((code: number) => void) | undefined;
  readonly done: Promise<number>;
  /** Aggregates the actors' metric snapshots; undefined when worker.metricsPort is 0. */
  readonly metrics: SupervisorMetrics | undefined;

  constructor(
    private readonly config: Config,
    private readonly o: SupervisorOptions,
    private readonly count: number,
  ) {
    this.children = Array.from({ length: count }, () => undefined);
    this.policy = new RestartPolicy({
      intensity: config.worker.restartIntensity,
      periodMs: config.worker.restartPeriodSeconds * 1000,
    });
    this.watchdog = new ActorWatchdog({
      stallMs: config.worker.stallSeconds * 1000,
      maxRssBytes: config.worker.actorMaxMemoryMb * MIB,
    });
    this.metrics =
      config.worker.metricsPort > 0
        ? new SupervisorMetrics(() => this.children.filter((child) => child !== undefined).length)
        : undefined;
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
  }

  start(): void {
    this.o.logger.info({ actors: this.count }, "supervisor started");
    for (let slot = 0; slot < this.count; slot++) this.spawn(slot);
    this.watchTimer = setInterval(() => this.watch(), WATCH_INTERVAL_MS);
  }

  /** Drains every actor; a second call (a second Ctrl-C) kills them at once. */
  drain(reason: string): void {
    if (this.draining) {
      this.o.logger.warn(
        { reason },
        "second stop request: killing actors now (their runs are reclaimed after the lease)",
      );
      for (const child of this.children) child?.kill("SIGKILL");
      return;
    }
    this.draining = true;
    for (const timer of this.restartTimers.values()) clearTimeout(timer);
    this.restartTimers.clear();
    const drainMs = this.config.worker.drainSeconds * 1000;
    this.o.logger.info({ reason, drainSeconds: this.config.worker.drainSeconds }, "draining actors");
    for (const child of this.children) child?.kill("SIGTERM");
    this.killTimer = setTimeout(() => {
      for (const child of this.children) {
        if (!child) continue;
        this.o.logger.error({ actorPid: child.pid }, "actor did not exit after draining; killing it");
        child.kill("SIGKILL");
      }
    }, drainMs + KILL_MARGIN_MS);
    this.checkDone();
  }

  private spawn(slot: number): void {
    const [command = process.execPath, ...args] = this.o.actorCommand ?? defaultActorCommand();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.o.env)) if (value !== undefined) env[name] = value;
    // Pings and metric snapshots travel on their own pipe (fd 3), never mixed with the logs on stdout and stderr.
    Object.assign(env, { A2A_ACTOR_SUPERVISED: "1", [ACTOR_PIPE_FD_ENV]: String(ACTOR_PIPE_FD) });
    // (however the supervisor itself was started)
    keepFreedMemory(env);
    const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit", "pipe"], env });
    const started = Date.now();
    if (child.pid !== undefined) this.watchdog.watch(slot, child.pid, started);
    const pipe = child.stdio[ACTOR_PIPE_FD];
    this.activity.set(child, "starting");
    const pipeRead =
      pipe instanceof Readable
        ? readActorMessages(
            pipe,
            (message) => {
              if (this.children[slot] === child) this.watchdog.seen(slot, Date.now(), message);
              if (message.kind === "metrics") this.metrics?.record(slot, message.metrics);
              else if (message.kind === "ready" || message.kind === "idle") this.activity.set(child, "idle");
              else if (message.kind === "busy") this.activity.set(child, "busy");
            },
            () => this.o.logger.warn({ slot }, "an actor sent a line on its pipe that is not a message"),
          )
        : Promise.resolve();
    this.children[slot] = child;
    const start: ActorStart = { config: this.config, handlerModules: [...(this.o.handlerModules ?? [])] };
    child.stdin?.on("error", () => {}); // an actor that died before reading: its exit is handled below
    child.stdin?.write(`${JSON.stringify(start)}\n`);
    child.on("error", (error) => this.o.logger.error({ err: error, slot }, "actor could not be started"));
    child.on("exit", (code, signal) => {
      this.onExit(slot, child);
      void within(pipeRead, PIPE_DRAIN_MS).then(() => this.restartOrGiveUp(slot, child, started, code, signal));
    });
    this.o.logger.info({ slot, actorPid: child.pid }, "actor started");
  }

  /** Kills every actor that stalled or outgrew its memory limit; the exit handler restarts its slot. */
  private watch(): void {
    for (const verdict of this.watchdog.check(Date.now())) {
      const child = this.children[verdict.slot];
      if (!child || child.pid !== verdict.pid) continue;
      this.killed.set(child, verdict.reason);
      this.logKill(verdict);
      this.metrics?.kills.inc({ reason: verdict.reason });
      child.kill("SIGKILL");
    }
  }

  private logKill({ slot, pid, reason, silentMs, rssBytes }: KillVerdict): void {
    const { stallSeconds, actorMaxMemoryMb } = this.config.worker;
    const rssMb = rssBytes === undefined ? undefined : Math.round(rssBytes / MIB);
    if (reason === "memory")
      this.o.logger.error(
        { reason, slot, actorPid: pid, rssMb, actorMaxMemoryMb },
        "actor above its memory limit: killed it (SIGKILL); its runs are reclaimed after their lease",
      );
    else
      this.o.logger.error(
        { reason, slot, actorPid: pid, silentSeconds: Math.round(silentMs / 100) / 10, stallSeconds, rssMb },
        "actor stalled (no ping): killed it (SIGKILL); its runs are reclaimed after their lease",
      );
  }

  /** The slot is free from the moment its actor exits (a drain need not wait for the rest of its pipe). */
  private onExit(slot: number, child: ChildProcess): void {
    if (this.children[slot] === child) {
      this.children[slot] = undefined;
      this.watchdog.forget(slot);
    }
    this.metrics?.retire(slot);
    if (!this.draining) return;
    this.o.logger.info({ slot, actorPid: child.pid, code: child.exitCode, signal: child.signalCode }, "actor exited");
    this.checkDone();
  }

  /** Once the actor's pipe is read to its end: restarts the slot, or gives up past the restart intensity. */
  private restartOrGiveUp(
    slot: number,
    child: ChildProcess,
    started: number,
    code: number | null,
    signal: string | null,
  ): void {
    if (this.draining) return;
    const now = Date.now();
    const killedFor = this.killed.get(child);
    const cause = exitCause(this.activity.get(child) ?? "starting", killedFor);
    const decision = this.policy.onExit(slot, now, now - started, countsTowardIntensity(cause));
    const { restartIntensity, restartPeriodSeconds } = this.config.worker;
    if (decision.action === "give-up") {
      this.o.logger.fatal(
        { slot, actorPid: child.pid, code, signal, cause, restartIntensity, restartPeriodSeconds },
        `restart intensity exceeded: more than ${restartIntensity} actor restarts within ${restartPeriodSeconds} s ` +
          "(exits while starting or idle; a run's do not count); the supervisor gives up and stops",
      );
      this.gaveUp = true;
      this.drain("restart intensity exceeded");
      return;
    }
    this.o.logger.warn(
      {
        slot,
        actorPid: child.pid,
        code,
        signal,
        cause,
        ...(killedFor ? { killedFor } : {}),
        delayMs: decision.delayMs,
      },
      "actor exited; restarting",
    );
    this.restartTimers.set(
      slot,
      setTimeout(() => {
        this.restartTimers.delete(slot);
        if (this.draining) return;
        this.metrics?.restarts.inc();
        this.spawn(slot);
      }, decision.delayMs),
    );
  }

  private checkDone(): void {
    if (!this.draining || this.children.some((child) => child !== undefined)) return;
    clearTimeout(this.killTimer);
    clearInterval(this.watchTimer);
    const code = this.gaveUp ? 1 : 0;
    this.o.logger.info({ code }, "supervisor stopped");
    this.finished?.(code);
  }
}

/** Resolves when `done` does or after `ms`, whichever comes first. */
function within(done: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs the supervisor until it is drained (SIGTERM, SIGINT or `signal`) or gives up after a crash loop.
 * Resolves with the process exit code: 0 after a drain, 1 after giving up.
 */
export async function runSupervisor(config: Config, options: SupervisorOptions): Promise<number> {
  const supervisor = new Supervisor(config, options, options.actors ?? config.worker.actors);
  const onSignal = (signal: NodeJS.Signals) => supervisor.drain(signal);
  if (options.handleSignals !== false) {
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  }
  options.signal?.addEventListener("abort", () => supervisor.drain("aborted"), { once: true });
  const { metricsHost, metricsPort } = config.worker;
  await supervisor.metrics?.listen(metricsHost, metricsPort, options.logger);
  supervisor.start();
  try {
    return await supervisor.done;
  } finally {
    await supervisor.metrics?.close();
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
}
