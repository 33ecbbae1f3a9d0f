// Finds A2A_* environment variables that set nothing (a typo, or a key from another version), with the name most
// likely meant, so that the command line can warn instead of silently running on defaults.
import { closest } from "./closest.ts";
import { configEnvironmentVariables } from "./load.ts";

/** A2A_* variables read by this runtime that are not config keys. */
export const OTHER_VARIABLES: readonly string[] = [
  "A2A_CONFIG",
  "A2A_API_KEY",
  "A2A_LOG_FORMAT",
  "A2A_ACTOR_SUPERVISED",
  "A2A_ACTOR_PIPE_FD",
  "A2A_SOAK",
  "A2A_FAULT_SEED",
];

export interface UnknownVariable {
  readonly name: string;
  /** The known variable it most likely meant. */
  readonly suggestion: string | undefined;
}

/** Every variable of `env` named A2A_* that neither sets a config key nor is read elsewhere, sorted by name. */
export function unknownEnvironmentVariables(env: Readonly<Record<string, string | undefined>>): UnknownVariable[] {
  const known = [...new Set([...configEnvironmentVariables().map((row) => row.env), ...OTHER_VARIABLES])].filter(
    (name) => name.startsWith("A2A_"),
  );
  const knownSet = new Set(known);
  return Object.keys(env)
    .filter((name) => name.startsWith("A2A_") && !knownSet.has(name) && env[name] !== undefined)
    .sort()
    .map((name) => ({ name, suggestion: closest(name, known) ?? bySuffix(name, known) }));
}

/** A2A_PORT → A2A_SERVER_PORT: the shortest known name that ends with the unknown one's words. */
function bySuffix(name: string, known: readonly string[]): string | undefined {
  const tail = `_${name.slice("A2A_".length).toUpperCase()}`;
  if (tail === "_") return undefined;
  return known.filter((candidate) => candidate.endsWith(tail)).sort((a, b) => a.length - b.length)[0];
}
