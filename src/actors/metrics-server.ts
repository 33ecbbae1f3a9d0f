// The supervisor's GET /metrics: aggregates the latest snapshot of each actor (sent on its pipe, see actor-pipe.ts)
// with prom-client's AggregatorRegistry, keeps the totals of actors that exited, and adds its own actor metrics.
import { createServer, type Server } from "node:http";
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from "prom-client";
import type { Logger } from "../log.ts";

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

export class SupervisorMetrics {
  private readonly own = new Registry();
  private readonly latest = new Map<number, Snapshot>();
  /** Snapshots of actors that exited: their counters stay in the totals, so that no counter goes down. */
  private retired: Snapshot[] = [];
  private server: Server | undefined;
  readonly restarts = new Counter({
    name: "a2a_actor_restarts_total",
    help: "Actor processes restarted by the supervisor after they exited.",
    registers: [this.own],
  });
  readonly kills = new Counter({
    name: "a2a_actor_kills_total",
    help: "Actors the supervisor's watchdog SIGKILLed, by reason (stalled, memory).",
    labelNames: ["reason"] as const,
    registers: [this.own],
  });

  constructor(liveActors: () => number) {
    new Gauge({
      name: "a2a_actors",
      help: "Actor processes running under this supervisor.",
      registers: [this.own],
      collect() {
        this.set(liveActors());
      },
    });
  }

  /** Keeps the latest snapshot an actor sent (prom-client's getMetricsAsJSON() of its registry). */
  record(slot: number, metrics: readonly unknown[]): void {
    this.latest.set(slot, metrics as Snapshot);
  }

  /** Keeps an exited actor's last snapshot in the totals and frees its slot. */
  retire(slot: number): void {
    const last = this.latest.get(slot);
    this.latest.delete(slot);
    if (last) this.retired.push(last);
  }

  /** The exposition text: every actor's metrics summed, then the supervisor's own. */
  async text(): Promise<string> {
    if (this.retired.length > 1) this.retired = [await AggregatorRegistry.aggregate(this.retired).getMetricsAsJSON()];
    const actors = AggregatorRegistry.aggregate([...this.retired, ...this.latest.values()]);
    return await Registry.merge([actors as Registry, this.own]).metrics();
  }

  /** Serves GET /metrics on host:port; a port that cannot be bound is logged, not fatal. */
  listen(host: string, port: number, logger: Logger): Promise<number | undefined> {
    const server = createServer((request, response) => {
      if (request.method !== "GET" || request.url?.split("?")[0] !== "/metrics") {
        response.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
        return;
      }
      this.text().then(
        (body) => response.writeHead(200, { "Content-Type": this.own.contentType }).end(body),
        (error: unknown) => {
          logger.error({ err: error }, "metrics: aggregation failed");
          response.writeHead(500, { "Content-Type": "text/plain" }).end("metrics aggregation failed\n");
        },
      );
    });
    this.server = server;
    return new Promise((resolve) => {
      server.once("error", (error) => {
        logger.warn({ err: error.message, host, port }, "metrics server not started");
        this.server = undefined;
        resolve(undefined);
      });
      server.listen(port, host, () => {
        const address = server.address();
        const bound = typeof address === "object" && address ? address.port : port;
        logger.info({ url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}/metrics` }, "metrics served");
        resolve(bound);
      });
    });
  }

  close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return Promise.resolve();
    server.closeAllConnections?.();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
