// `a2a-runtime sweep --once | --interval S [--handlers <module...>]`: a worker for installations without long-lived
// consumers (cron). Each tick beats, reclaims expired leases, runs what is queued and applies retention.
import { hostname } from "node:os";
import type { Command } from "commander";
import { startTracing } from "../tracing/index.ts";
import { CommandError, EXIT_CONFIG } from "./command-error.ts";
import type { CliContext } from "./context.ts";
import { handlerModules } from "./handler-modules.ts";
import { HANDLERS_OPTION, positiveInteger } from "./work.ts";

export function registerSweep(program: Command, context: CliContext): void {
  program
    .command("sweep")
    .description("run what is queued, reclaim expired leases, apply retention; --once for cron")
    .option("--once", "one tick, then exit (exit code 1 when it failed)")
    .option("--interval <seconds>", "seconds between ticks (default: worker.heartbeatSeconds)", positiveInteger)
    .option("--handlers <modules...>", HANDLERS_OPTION)
    .action(async (options: { once?: boolean; interval?: number; handlers?: string[] }) => {
      const {
        builtinTools,
        connectRedis,
        HandlerModuleError,
        loadProfileHandlers,
        RUNTIME_VERSION,
        resolveApiKeys,
        runSweep,
      } = await import("../actors/index.ts");
      const config = context.config();
      const logger = context.logger("sweep");
      const tracing = await startTracing(config.tracing);
      // sweep runs the handlers in its own process: it loads them here (a failure is one line, exit code 78).
      const handlers = await loadProfileHandlers(handlerModules(config, options.handlers), config.profiles).catch(
        (error: unknown) => {
          throw error instanceof HandlerModuleError ? new CommandError(error.message, EXIT_CONFIG) : error;
        },
      );
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
      await tracing.flush().catch(() => {});
      process.exit(code);
    });
}
