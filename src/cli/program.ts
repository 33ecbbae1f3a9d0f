// The a2a-runtime command line: the only code that reads the environment and argv, and wires the areas together.
// Loaded by the entry, src/cli.ts, once the allocator is set (./allocator.ts).
import { Command } from "commander";
import { ConfigError } from "../config/index.ts";
import { registerClients } from "./clients.ts";
import { CommandError } from "./command-error.ts";
import { createContext } from "./context.ts";
import { registerGateway } from "./gateway.ts";
import { registerInit } from "./init.ts";
import { requireRedis } from "./redis-reach.ts";
import { registerSend } from "./send.ts";
import { registerStart } from "./start.ts";
import { registerStatus } from "./status.ts";
import { registerSweep } from "./sweep.ts";
import { registerTask } from "./task.ts";
import { registerWork } from "./work.ts";

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
