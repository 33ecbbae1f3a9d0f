// `a2a-runtime sweep --once | --interval S [--handlers <module...>]`: a worker for installations without long-lived
// consumers (cron). Each tick beats, reclaims expired leases, runs what is queued and applies retention.
import { hostname } from "node:os";
import type { Command } from "commander";
import type { CliContext } from "./context.ts";
import { positiveInteger } from "./work.ts";

export function registerSweep(program: Command, context: CliContext): void {
  program
    .command("sweep")
    .description("run what is queued, reclaim expired leases, apply retention; --once for cron")
    .option("--once", "one tick, then exit (exit code 1 when it failed)")
    .option("--interval <seconds>", "seconds between ticks (default: worker.heartbeatSeconds)", positiveInteger)
    .option("--handlers <modules...>", "modules whose defineHandler() exports are registered besides the built-ins")
    .action(async (options: { once?: boolean; interval?: number; handlers?: string[] }) => {
      const {
        builtinHandlers,
        builtinTools,
        connectRedis,
        loadHandlerModules,
        RUNTIME_VERSION,
        resolveApiKeys,
        runSweep,
      } = await import("../actors/index.ts");
      const config = context.config();
      const logger = context.logger("sweep");
      const handlers = builtinHandlers();
      await loadHandlerModules(options.handlers ?? [], handlers);
      const apiKeys = resolveApiKeys(config, context.env);
      for (const missing of apiKeys.missing) logger.warn({ missing }, "LLM API key variable is not set");
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
      const code = await runSweep(config, {
        once: options.once === true,
        ...(options.interval !== undefined ? { intervalSeconds: options.interval } : {}),
        handlers,
        tools: builtinTools(),
        apiKeys: apiKeys.keys,
        logger,
        connect: (name) => connectRedis(config.redis, name),
        host: hostname(),
        pid: process.pid,
        version: RUNTIME_VERSION,
        signal: stop.signal,
        env: context.env,
      });
      process.exit(code);
    });
}
