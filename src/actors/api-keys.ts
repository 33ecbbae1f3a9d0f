// Resolves each profile's LLM API key from the environment the entry file passes in (never process.env here).
// The keys are handed to the actors' LLM clients and never logged.
import type { Config } from "../config/index.ts";

export interface ApiKeys {
  /** Profile name → API key. */
  keys: Map<string, string>;
  /** `<profile>: <VARIABLE>` for every profile whose key variable is not set (for a warning; no values). */
  missing: string[];
}

export function resolveApiKeys(config: Config, env: Readonly<Record<string, string | undefined>>): ApiKeys {
  const keys = new Map<string, string>();
  const missing: string[] = [];
  for (const profile of config.profiles) {
    const name = profile.llm?.apiKeyEnv;
    if (name === undefined) continue;
    const value = env[name];
    if (value) keys.set(profile.name, value);
    else missing.push(`${profile.name}: ${name}`);
  }
  return { keys, missing };
}
