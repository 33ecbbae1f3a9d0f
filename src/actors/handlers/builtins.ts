// The handlers and tools every actor knows without configuration, and the loader of author modules (`--handlers`).

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { clockTool, readFileTool } from "./builtin-tools.ts";
import { echoHandler, noopHandler } from "./echo.ts";
import { faultsHandler } from "./faults.ts";
import { HandlerRegistry, isNamedHandler } from "./handler-api.ts";
import { llmHandler } from "./llm.ts";
import { ToolRegistry } from "./tools.ts";

/** A registry holding `echo`, `noop`, `llm` and `faults` (which no profile uses unless an operator binds one to it). */
export function builtinHandlers(): HandlerRegistry {
  return new HandlerRegistry().register(echoHandler).register(noopHandler).register(llmHandler).register(faultsHandler);
}

/** A registry holding the tools `clock` and `read_file`. */
export function builtinTools(): ToolRegistry {
  return new ToolRegistry().register(clockTool).register(readFileTool);
}

export class HandlerModuleError extends Error {
  override readonly name = "HandlerModuleError";
}

/**
 * Imports each module (a path relative to the working directory, or a package name) and registers every handler it
 * exports (values made with defineHandler). Returns the names registered; a module without one is an error.
 */
export async function loadHandlerModules(modules: readonly string[], registry: HandlerRegistry): Promise<string[]> {
  const names: string[] = [];
  for (const specifier of modules) {
    const target = /^[./]/.test(specifier) ? pathToFileURL(resolve(specifier)).href : specifier;
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      throw new HandlerModuleError(`handler module ${specifier} cannot be loaded`, { cause: error });
    }
    const found = Object.values(loaded).filter(isNamedHandler);
    if (found.length === 0)
      throw new HandlerModuleError(`handler module ${specifier} exports no defineHandler() value`);
    for (const handler of found) {
      registry.register(handler);
      names.push(handler.name);
    }
  }
  return names;
}
