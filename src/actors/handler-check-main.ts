// Entry of the short-lived process that loads handler modules before a supervisor starts (`work`, `start`): authors'
// code runs here, not in the supervisor or the gateway. Prints one JSON line: the handler names, or why a module failed.
import { builtinHandlers, loadHandlerModules } from "./handlers/builtins.ts";

const modules = process.argv.slice(2);
try {
  const registry = builtinHandlers();
  await loadHandlerModules(modules, registry);
  process.stdout.write(`${JSON.stringify({ names: registry.names() })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? error.message : String(error) })}\n`);
}
// A module may leave timers or connections open: the check is over.
process.exit(0);
