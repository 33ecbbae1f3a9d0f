// `a2a-runtime status [--json] [--minimum-workers N]`: live workers, queue depth, running, expired leases and dead
// letters. Exit code 0, or 2 when fewer than N workers (consumers + sweep ticks) are live, for monitoring.
import { type Command, InvalidArgumentError } from "commander";
import { KeySpace } from "../journal/index.ts";
import type { CliContext } from "./context.ts";
import { redisProblem, redisTarget } from "./redis-reach.ts";

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number, 0 or more");
  return Number(value);
}

export function registerStatus(program: Command, context: CliContext): void {
  program
    .command("status")
    .description("live workers and queue figures; exit code 2 when fewer than --minimum-workers are live")
    .option("--json", "print the report as JSON")
    .option(
      "--minimum-workers <n>",
      "live workers (consumers + sweep ticks) required for exit code 0",
      nonNegativeInteger,
      1,
    )
    .action(async (options: { json?: boolean; minimumWorkers: number }) => {
      const config = context.config();
      const redis = context.redis("status");
      let code: number;
      try {
        const { formatStatus, readStatus, statusExitCode } = await import("../actors/index.ts");
        const report = await readStatus(redis, new KeySpace(config.redis.keyPrefix, config.redis.shards), config);
        code = statusExitCode(report, options.minimumWorkers);
        if (options.json)
          context.print(JSON.stringify({ ...report, minimumWorkers: options.minimumWorkers, ok: code === 0 }));
        else context.print(formatStatus(report, options.minimumWorkers));
      } catch (error) {
        const cause = (await redisProblem(config.redis)) ?? (error instanceof Error ? error.message : String(error));
        process.stderr.write(`status: Redis at ${redisTarget(config.redis)} could not be read (${cause})\n`);
        code = 1;
      } finally {
        redis.disconnect();
      }
      process.exit(code);
    });
}
