// One actor process's Prometheus metrics (its own prom-client registry): runs by outcome, run duration, reclaims, push
// deliveries by outcome and Redis errors. Snapshots go to the supervisor on the actor's pipe; it aggregates and serves.
import { Counter, Histogram, Registry } from "prom-client";
import type { PushCounters } from "../push/index.ts";
import type { ActorMessage } from "./actor-message.ts";
import type { ActorPipe } from "./actor-pipe.ts";

/** How a run leg ended: its final state, or what took it away from this actor. */
export type RunOutcome =
  | "completed"
  | "input_required"
  | "auth_required"
  | "failed"
  | "canceled"
  | "timeout"
  | "output_limit"
  | "exhausted"
  | "unavailable"
  | "lost"
  | "drained";

/** How often an actor sends its snapshot, in ms. */
export const SNAPSHOT_INTERVAL_MS = 1000;

const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export class ActorMetrics {
  readonly registry = new Registry();
  readonly runs = new Counter({
    name: "a2a_runs_total",
    help: "Run legs finished or given up by actors, by outcome.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly runSeconds = new Histogram({
    name: "a2a_run_duration_seconds",
    help: "Time from claim to the end of a run leg, by outcome, in seconds.",
    labelNames: ["outcome"] as const,
    buckets: RUN_BUCKETS,
    registers: [this.registry],
  });
  readonly reclaims = new Counter({
    name: "a2a_reclaims_total",
    help: "Queue entries taken over after their lease expired.",
    registers: [this.registry],
  });
  readonly pushDeliveries = new Counter({
    name: "a2a_push_deliveries_total",
    help: "Webhook delivery attempts by outcome (delivered, retried, dead, disabled, dropped).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly redisErrors = new Counter({
    name: "a2a_redis_errors_total",
    help: "Redis connection errors seen by actors, by connection.",
    labelNames: ["connection"] as const,
    registers: [this.registry],
  });
  private readonly pushSeen: PushCounters = { delivered: 0, retried: 0, dead: 0, disabled: 0, dropped: 0 };

  /** Counts one run leg; `startedAt` is performance.now() at its claim. */
  run(outcome: RunOutcome, startedAt: number): void {
    this.runs.inc({ outcome });
    this.runSeconds.observe({ outcome }, (performance.now() - startedAt) / 1000);
  }

  /** Brings the push counter up to date with the PushWorker's own counters. */
  syncPush(counters: PushCounters): void {
    for (const outcome of Object.keys(this.pushSeen) as (keyof PushCounters)[]) {
      const delta = counters[outcome] - this.pushSeen[outcome];
      if (delta > 0) this.pushDeliveries.inc({ outcome }, delta);
      this.pushSeen[outcome] = counters[outcome];
    }
  }

  async snapshot(): Promise<ActorMessage> {
    return { kind: "metrics", metrics: await this.registry.getMetricsAsJSON() };
  }
}

/**
 * Sends a snapshot every SNAPSHOT_INTERVAL_MS on the actor's pipe until the returned stop function is called; stop
 * sends a last one. `before` runs before each snapshot.
 */
export function reportSnapshots(metrics: ActorMetrics, pipe: ActorPipe, before: () => void): () => Promise<void> {
  const send = () =>
    pipe.send(() => {
      before();
      return metrics.snapshot();
    });
  const timer = setInterval(() => void send(), SNAPSHOT_INTERVAL_MS);
  return async () => {
    clearInterval(timer);
    await send();
  };
}
