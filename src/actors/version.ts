// The runtime's version as package.json states it: recorded in every heartbeat.
import { readFileSync } from "node:fs";

function readVersion(): string {
  try {
    const manifest: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    const version = (manifest as { version?: unknown }).version;
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}

export const RUNTIME_VERSION: string = readVersion();
