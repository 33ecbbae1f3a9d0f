// Checks handler modules before workers start: loads them in a process of their own (see handler-check-main.ts) and
// compares the names they register with the profiles, so that a module that cannot be loaded, or a profile whose
// handler nobody registers, stops the command at once with one line instead of a crash loop of actors.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Profile } from "../config/index.ts";
import { builtinHandlers, HandlerModuleError, unregisteredHandlersProblem } from "./handlers/builtins.ts";

function checkCommand(modules: readonly string[]): string[] {
  const entry = fileURLToPath(new URL("./handler-check-main.ts", import.meta.url));
  return "Deno" in globalThis
    ? [process.execPath, "run", "-A", entry, ...modules]
    : [process.execPath, entry, ...modules];
}

async function registeredNames(modules: readonly string[]): Promise<string[]> {
  if (modules.length === 0) return builtinHandlers().names();
  const [command = process.execPath, ...args] = checkCommand(modules);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", resolve);
  });
  const line = out.trim().split("\n").at(-1) ?? "";
  let report: { names?: string[]; error?: string } = {};
  try {
    report = JSON.parse(line) as typeof report;
  } catch {
    throw new HandlerModuleError(
      `handler modules ${modules.join(", ")} ended their check without a report (exit ${code})`,
    );
  }
  if (report.error !== undefined) throw new HandlerModuleError(report.error);
  return report.names ?? [];
}

/**
 * Loads `modules` in a separate process and checks that every profile's handler is registered.
 * @throws HandlerModuleError with a one-line message: the module and its cause, or the profiles without a handler.
 */
export async function checkHandlerModules(modules: readonly string[], profiles: readonly Profile[]): Promise<string[]> {
  const names = await registeredNames(modules);
  const problem = unregisteredHandlersProblem(profiles, names);
  if (problem !== undefined) throw new HandlerModuleError(problem);
  return names;
}
