#!/usr/bin/env bun
// The a2a-runtime command line: the only entry that reads the environment and argv, and wires the areas together.
import { Command } from "commander";
import { registerClients } from "./cli/clients.ts";
import { CommandError } from "./cli/command-error.ts";
import { createContext } from "./cli/context.ts";
import { registerGateway } from "./cli/gateway.ts";
import { registerInit } from "./cli/init.ts";
import { requireRedis } from "./cli/redis-reach.ts";
import { registerSend } from "./cli/send.ts";
import { registerStart } from "./cli/start.ts";
import { registerStatus } from "./cli/status.ts";
import { registerSweep } from "./cli/sweep.ts";
import { registerTask } from "./cli/task.ts";
import { registerWork } from "./cli/work.ts";
import { ConfigError } from "./config/index.ts";

const program = new Command()
  .name("a2a-runtime")
  .description("Serve agents over A2A 1.0 with every task in Redis.")
  .option("-c, --config <file>", "configuration file (JSON); default: $A2A_CONFIG")
  .showHelpAfterError();

const context = createContext(process.env, () => program.opts<{ config?: string }>().config);
/** Commands that cannot do anything without Redis: they check it answers before they start. */
const NEEDS_REDIS = new Set(["gateway", "work", "sweep", "clients"]);
program.hook("preAction", async (_program, action) => {
  const top = action.parent === program ? action : action.parent;
  if (top && NEEDS_REDIS.has(top.name())) await requireRedis(context.config());
});
registerInit(program, context);
registerStart(program, context);
registerClients(program, context);
registerGateway(program, context);
registerWork(program, context);
registerSweep(program, context);
registerStatus(program, context);
registerSend(program, context);
registerTask(program, context);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  if (error instanceof CommandError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(error.exitCode);
  }
  // Redis went away after the command's first check: one line, not the client library's stack.
  if (error instanceof Error && /^(MaxRetriesPerRequestError|ReplyError|ClusterAllFailedError)$/.test(error.name)) {
    process.stderr.write(`Redis failed during the command: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
