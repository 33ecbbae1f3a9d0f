// The handlers and tools every actor knows without configuration, and the loader of author modules (`--handlers`).

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Profile } from "../../config/index.ts";
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

/** The first line of why an import failed, with the error's name (SyntaxError, ResolveMessage, ...). */
function causeOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split("\n")[0] ?? "";
  const first = error.message.split("\n")[0] ?? "";
  return error.name === "Error" || first.startsWith(error.name) ? first : `${error.name}: ${first}`;
}

/**
 * The problem when a profile names a handler that is not among `registered`: one line naming each such profile, the
 * handlers there are and how to add one; undefined when every profile's handler is registered.
 */
export function unregisteredHandlersProblem(
  profiles: readonly Profile[],
  registered: readonly string[],
): string | undefined {
  const known = new Set(registered);
  const missing = profiles
    .filter((profile) => !known.has(profile.handler))
    .map((profile) => `profile ${JSON.stringify(profile.name)} names handler ${JSON.stringify(profile.handler)}`);
  if (missing.length === 0) return undefined;
  return (
    `${missing.join("; ")}, which no handler module registers (registered: ${[...known].sort().join(", ")}). ` +
    'Load the module that defines it with --handlers or the config\'s "handlers".'
  );
}

/** Loads the modules besides the built-ins and checks every profile's handler; throws HandlerModuleError. */
export async function loadProfileHandlers(
  modules: readonly string[],
  profiles: readonly Profile[],
): Promise<HandlerRegistry> {
  const registry = builtinHandlers();
  await loadHandlerModules(modules, registry);
  const problem = unregisteredHandlersProblem(profiles, registry.names());
  if (problem !== undefined) throw new HandlerModuleError(problem);
  return registry;
}

/**
 * Imports each module (a path relative to the working directory, or a package name) and registers every handler it
 * exports (values made with defineHandler). Returns the names registered; a module without one is an error.
 */
export async function loadHandlerModules(modules: readonly string[], registry: HandlerRegistry): Promise<string[]> {
  const names: string[] = [];
  for (const specifier of modules) {
    // A path (./x.ts, /abs/x.ts, or handlers/x.ts naming a file that exists) or else a package name.
    const isPath = /^[./]/.test(specifier) || existsSync(resolve(specifier));
    const target = isPath ? pathToFileURL(resolve(specifier)).href : specifier;
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      throw new HandlerModuleError(`handler module ${specifier} cannot be loaded: ${causeOf(error)}`, { cause: error });
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
