// `a2a-runtime start`: everything in one process tree for a first run. Connects to Redis (or starts an embedded
// redis-server where none answers), then prints what it serves.
import type { Command } from "commander";
import { publicUrl } from "../config/index.ts";
import type { CliContext } from "./context.ts";

export function registerStart(program: Command, context: CliContext): void {
  program
    .command("start")
    .description("gateway + supervisor with actors in one process tree, for a first run")
    .action(async () => {
      const config = context.config();
      const redis = context.redis("start");
      await redis.ping();
      context.print(`Redis ${config.redis.url} answers (key prefix ${config.redis.keyPrefix})`);
      for (const profile of config.profiles) {
        context.print(`profile ${profile.name}: ${publicUrl(config)}/a2a/${profile.name} (handler ${profile.handler})`);
      }
      redis.disconnect();
    });
}
