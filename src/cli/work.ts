// `a2a-runtime work [--actors N] [--handlers <module...>]`: the supervisor with its actor processes. Exits 0 after a
// drain (SIGTERM/SIGINT), 1 when it gave up past the restart-intensity limit.
import { type Command, InvalidArgumentError } from "commander";
import type { CliContext } from "./context.ts";
import { checkedHandlerModules } from "./handler-modules.ts";

/** The help of --handlers, shared by start, work and sweep. */
export const HANDLERS_OPTION =
  "modules whose defineHandler() exports are registered besides the built-ins and the config's handlers";

export function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError("must be a whole number, 1 or more");
  return Number(value);
}

export function registerWork(program: Command, context: CliContext): void {
  program
    .command("work")
    .description("the supervisor: starts N actor processes, restarts them on crash, drains them on SIGTERM")
    .option("--actors <n>", "actor processes (default: worker.actors)", positiveInteger)
    .option("--handlers <modules...>", HANDLERS_OPTION)
    .action(async (options: { actors?: number; handlers?: string[] }) => {
      const config = context.config();
      const handlerModules = await checkedHandlerModules(config, options.handlers);
      // Loaded on use: a gateway process started by this CLI must not even load worker code.
      const { runSupervisor } = await import("../actors/index.ts");
      const code = await runSupervisor(config, {
        actors: options.actors ?? config.worker.actors,
        env: context.env,
        logger: context.logger("supervisor"),
        handlerModules,
      });
      process.exit(code);
    });
}
