// Entry of one actor process, started by the supervisor: reads `{config, handlerModules}` from the first stdin line,
// API keys from the environment; pings the supervisor on its pipe (its watchdog kills an actor that falls silent) and
// tells it when handlers run (see handler-activity.ts); drains on SIGTERM/SIGINT or a "drain" line, and exits at once
// (handing its runs back) when stdin closes, which means the supervisor is gone.
import { hostname } from "node:os";
import { createInterface } from "node:readline";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type Config, ConfigSchema } from "../config/index.ts";
import { createLogger, wantsPrettyLogs } from "../log.ts";
import { startTracing, type TracingHandle } from "../tracing/index.ts";
import { Actor } from "./actor.ts";
import { actorPipeFrom } from "./actor-pipe.ts";
import { resolveApiKeys } from "./api-keys.ts";
import { connectRedis } from "./connections.ts";
import { HandlerActivity } from "./handler-activity.ts";
import { builtinTools, loadProfileHandlers } from "./handlers/builtins.ts";
import { ActorMetrics, reportSnapshots } from "./metrics.ts";
import type { ActorStart } from "./supervisor.ts";
import { RUNTIME_VERSION } from "./version.ts";

const ActorStartSchema = Type.Object({ config: ConfigSchema, handlerModules: Type.Array(Type.String()) });

interface Started {
  actor: Actor;
  metrics: ActorMetrics;
  config: Config;
  tracing: TracingHandle;
}

async function start(line: string): Promise<Started> {
  const parsed: unknown = JSON.parse(line);
  if (!Value.Check(ActorStartSchema, parsed)) {
    const first = [...Value.Errors(ActorStartSchema, parsed)][0];
    throw new Error(`actor start message does not match its schema at ${first?.path}: ${first?.message}`);
  }
  const { config, handlerModules } = parsed as ActorStart;
  const logger = createLogger("actor", config.log.level, { pretty: wantsPrettyLogs(process.stderr, process.env) });
  const tracing = await startTracing(config.tracing);
  const loaded = await loadProfileHandlers(handlerModules, config.profiles);
  // Supervised, each handler says when it runs: the supervisor does not count the exit of an actor killed by a run.
  const handlers = pipe ? new HandlerActivity(pipe).wrap(loaded) : loaded;
  const apiKeys = resolveApiKeys(config, process.env);
  const metrics = new ActorMetrics();
  for (const missing of apiKeys.missing) logger.warn({ missing }, "LLM API key variable is not set");
  const actor = new Actor({
    config,
    handlers,
    tools: builtinTools(),
    apiKeys: apiKeys.keys,
    logger,
    connect: (name) => {
      const redis = connectRedis(config.redis, name);
      redis.on("error", () => metrics.redisErrors.inc({ connection: name }));
      return redis;
    },
    host: hostname(),
    pid: process.pid,
    version: RUNTIME_VERSION,
    env: process.env,
    metrics,
  });
  return { actor, metrics, config, tracing };
}

/** Reports metric snapshots on the pipe when the supervisor serves metrics; returns the function that stops it. */
function reportMetrics(started: Actor, metrics: ActorMetrics, config: Config): () => Promise<void> {
  if (!pipe || config.worker.metricsPort === 0) return async () => {};
  return reportSnapshots(metrics, pipe, () => started.syncMetrics());
}

const supervised = process.env.A2A_ACTOR_SUPERVISED === "1";
const pipe = actorPipeFrom(process.env);
pipe?.ping();
const lines = createInterface({ input: process.stdin });
let actor: Actor | undefined;
let starting = false;
/** A drain asked for before the actor was running: [reason, grace ms or undefined for drainSeconds]. */
let pendingDrain: [string, number | undefined] | undefined;

function drain(reason: string, graceMs?: number): void {
  if (actor) actor.drain(reason, graceMs);
  else if (!starting) process.exit(0);
  else pendingDrain = [reason, graceMs];
}

lines.on("close", () => {
  if (supervised) drain("supervisor gone", 0);
});
process.on("SIGTERM", () => drain("SIGTERM"));
process.on("SIGINT", () => drain("SIGINT"));

lines.on("line", (line) => {
  if (starting) {
    if (line.trim() === "drain") drain("drain requested");
    return;
  }
  starting = true;
  start(line)
    .then(async ({ actor: started, metrics, config, tracing }) => {
      actor = started;
      // Loaded (handler modules included): from now on the watchdog allows only worker.stallSeconds of silence, and
      // an exit counts as idle, not as a failed start. Written before any work begins (a heartbeat shows it was).
      await pipe?.send({ kind: "ready" });
      const stopReporting = reportMetrics(started, metrics, config);
      if (pendingDrain) started.drain(...pendingDrain);
      await started.run();
      await stopReporting();
      await tracing.flush().catch(() => {});
      process.exit(0);
    })
    .catch((error: unknown) => {
      process.stderr.write(`actor failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
});
