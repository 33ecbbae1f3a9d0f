// The gateway's Prometheus metrics (prom-client): accepts, refusals by reason, blocking waits, open streams, requests
// by binding, method and code, Redis errors, and installation gauges read from Redis at each scrape. Served at
// GET /metrics.
import { timingSafeEqual } from "node:crypto";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Config } from "../config/index.ts";
import { type KeySpace, type RedisLike, readStatus } from "../journal/index.ts";
import type { Logger } from "../log.ts";

/** How a blocking SendMessage's wait ended: met (terminal or interrupted), timeout (504), gone, aborted, stopped. */
export type WaitOutcomeLabel = "met" | "timeout" | "gone" | "aborted" | "stopped";

export interface GatewayMetricsSources {
  redis: RedisLike;
  keys: KeySpace;
  config: Config;
  /** SSE streams open in this process now. */
  openStreams(): number;
  logger: Logger;
}

/** Upper bounds of request and wait histograms, in seconds (the wait tops out at blockingWaitSeconds ≤ 100). */
const WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 100];
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 100];

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly accepts = new Counter({
    name: "a2a_accepts_total",
    help: "Messages stored: new tasks (kind=new) and follow-ups to interrupted tasks (kind=resume), by profile.",
    labelNames: ["profile", "kind"] as const,
    registers: [this.registry],
  });
  readonly refusals = new Counter({
    name: "a2a_refusals_total",
    help: "Requests refused for want of capacity or a worker, by reason (WORKER_UNAVAILABLE, ..._LIMIT_EXCEEDED).",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly waits = new Counter({
    name: "a2a_blocking_waits_total",
    help: "Blocking SendMessage waits by outcome (met, timeout, gone, aborted, stopped).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly waitSeconds = new Histogram({
    name: "a2a_blocking_wait_seconds",
    help: "How long blocking SendMessage requests waited for their task, in seconds.",
    labelNames: ["outcome"] as const,
    buckets: WAIT_BUCKETS,
    registers: [this.registry],
  });
  readonly requests = new Counter({
    name: "a2a_requests_total",
    help: "Requests by binding (jsonrpc, rest, grpc), method and answer code (0 = success, else the JSON-RPC error code).",
    labelNames: ["binding", "method", "code"] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: "a2a_request_duration_seconds",
    help: "Time to answer a request (a stream: until it started), by binding and method, in seconds.",
    labelNames: ["binding", "method"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  /** The OpenTelemetry A2A convention's `a2a.server.operation.duration`, in Prometheus naming. */
  readonly operationSeconds = new Histogram({
    name: "a2a_server_operation_duration_seconds",
    help:
      "Duration of A2A server operations (a stream: until it started), in seconds, by method, binding (JSONRPC, " +
      "HTTP+JSON) and error type ('' on success): the OpenTelemetry A2A convention's a2a.server.operation.duration.",
    labelNames: ["a2a_method_name", "a2a_protocol_binding", "error_type"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  readonly redisErrors = new Counter({
    name: "a2a_redis_errors_total",
    help: "Redis connection errors seen by this process, by connection.",
    labelNames: ["connection"] as const,
    registers: [this.registry],
  });
  private readonly installation = {
    up: this.gauge("a2a_installation_read_ok", "1 when the installation gauges below were read from Redis."),
    queueDepth: this.gauge("a2a_queue_depth", "Queued runs that no actor has taken yet (all shards)."),
    oldestQueued: this.gauge("a2a_oldest_queued_age_seconds", "Age of the oldest queued run; 0 when none."),
    running: this.gauge("a2a_running_runs", "Runs taken by an actor and not finished."),
    expiredLeases: this.gauge("a2a_expired_leases", "Running runs whose lease expired (to be reclaimed)."),
    deadLetters: this.gauge("a2a_dead_letters", "Entries of the run dead-letter streams."),
    liveWorkers: this.gauge("a2a_live_workers", "Actors and sweep ticks whose heartbeat is within livenessSeconds."),
    pushPending: this.gauge("a2a_push_pending", "Webhook notifications waiting in the outbox."),
    pushDead: this.gauge("a2a_push_dead_letters", "Webhook notifications given up."),
  };

  constructor(private readonly sources: GatewayMetricsSources) {
    new Gauge({
      name: "a2a_open_streams",
      help: "SSE streams open in this gateway process.",
      registers: [this.registry],
      collect() {
        this.set(sources.openStreams());
      },
    });
  }

  /** Counts one blocking wait; `startedAt` is performance.now() when the request arrived. */
  wait(outcome: WaitOutcomeLabel, startedAt: number): void {
    this.waits.inc({ outcome });
    this.waitSeconds.observe({ outcome }, (performance.now() - startedAt) / 1000);
  }

  /** The exposition text, after reading the installation gauges (left out, with read_ok 0, when Redis fails). */
  async text(): Promise<string> {
    const { redis, keys, config, logger } = this.sources;
    const g = this.installation;
    try {
      const report = await readStatus(redis, keys, config);
      g.queueDepth.set(report.queueDepth);
      g.oldestQueued.set(report.oldestQueuedAgeSeconds ?? 0);
      g.running.set(report.running);
      g.expiredLeases.set(report.expiredLeases);
      g.deadLetters.set(report.deadLetters);
      g.liveWorkers.set(report.liveConsumers + report.liveSweeps);
      g.pushPending.set(report.pushPending);
      g.pushDead.set(report.pushDeadLetters);
      g.up.set(1);
    } catch (error) {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, "metrics: Redis not read");
      for (const gauge of Object.values(g)) gauge.reset();
      g.up.set(0);
    }
    return await this.registry.metrics();
  }

  /** GET /metrics: 401 without the bearer token when server.metricsToken is set. */
  async respond(request: Request): Promise<Response> {
    const token = this.sources.config.server.metricsToken;
    if (token !== "" && !bearerMatches(request.headers.get("authorization"), token)) {
      return new Response("metrics need Authorization: Bearer <server.metricsToken>\n", {
        status: 401,
        headers: { "WWW-Authenticate": 'Bearer realm="metrics"', "Content-Type": "text/plain" },
      });
    }
    return new Response(await this.text(), {
      headers: { "Content-Type": this.registry.contentType, "Cache-Control": "no-store" },
    });
  }

  private gauge(name: string, help: string): Gauge {
    return new Gauge({ name, help, registers: [this.registry] });
  }
}

/** Compares the presented bearer token with the configured one in constant time. */
export function bearerMatches(header: string | null, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match?.[1]) return false;
  const given = Buffer.from(match[1]);
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
