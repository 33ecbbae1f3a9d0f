// The handler modules a worker command loads: the config's `handlers` and the command's --handlers, checked before
// anything starts (a module that cannot be loaded, or a profile without a handler, is one line and exit code 78).
import { isAbsolute, resolve } from "node:path";
import type { Config } from "../config/index.ts";
import { CommandError, EXIT_CONFIG } from "./command-error.ts";

/** The config's modules, then the command line's (paths made absolute against the working directory), once each. */
export function handlerModules(config: Config, given: readonly string[] = []): string[] {
  const fromCommandLine = given.map((module) =>
    /^\.\.?\//.test(module) || isAbsolute(module) ? resolve(module) : module,
  );
  return [...new Set([...config.handlers, ...fromCommandLine])];
}

/** Loads the modules in a process of their own and checks every profile's handler; a CommandError otherwise. */
export async function checkedHandlerModules(config: Config, given: readonly string[] = []): Promise<string[]> {
  const modules = handlerModules(config, given);
  const { checkHandlerModules, HandlerModuleError } = await import("../actors/index.ts");
  try {
    await checkHandlerModules(modules, config.profiles);
  } catch (error) {
    if (error instanceof HandlerModuleError) throw new CommandError(error.message, EXIT_CONFIG);
    throw error;
  }
  return modules;
}
