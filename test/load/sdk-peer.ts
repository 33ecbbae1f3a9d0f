// Starts the @a2a-js/sdk peer (test/load/sdk-server.ts) as a child process: on Bun directly, or on Node from a bundle
// that leaves the packages external (so Node loads express and the SDK from node_modules as an app would).
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { basename } from "node:path";
import { freePort } from "../support/redis.ts";
import { BUN } from "./installation.ts";
import { type Child, startChild } from "./processes.ts";

export type PeerRuntime = "bun" | "node";
export type PeerMode = "immediate" | "echo";

const SOURCE = new URL("./sdk-server.ts", import.meta.url).pathname;
const BUNDLE_DIR = new URL("../../node_modules/.cache/a2a-bench/", import.meta.url).pathname;
const bundles = new Map<string, string>();

/**
 * Bundles a TypeScript script of test/load for Node (which cannot run .ts here), packages left external, into
 * node_modules/.cache so that Node resolves them from node_modules. Returns the bundle's path.
 */
export function bundleForNode(source: string): string {
  const done = bundles.get(source);
  if (done) return done;
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const out = `${BUNDLE_DIR}${basename(source, ".ts")}.mjs`;
  const args = ["build", source, "--target=node", "--packages=external", "--outfile", out];
  const run = spawnSync(BUN, args, { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`could not bundle ${source} for Node: ${run.stderr}`);
  bundles.set(source, out);
  return out;
}

export function nodeVersion(): string {
  return spawnSync("node", ["--version"], { encoding: "utf8" }).stdout.trim() || "not installed";
}

/** The command line of the peer, as the report shows it; `store` as sdk-server takes it. */
export function peerCommand(runtime: PeerRuntime, mode: PeerMode, store = "memory"): string {
  const storeArg = store === "memory" ? "" : ` ${store}`;
  return runtime === "bun"
    ? `bun test/load/sdk-server.ts <port> ${mode}${storeArg}`
    : `node --expose-gc node_modules/.cache/a2a-bench/sdk-server.mjs <port> ${mode}${storeArg}`;
}

/** Starts the peer with `store`: "memory" (InMemoryTaskStore) or a database URL (DatabaseTaskStore). */
export async function startSdkServer(
  runtime: PeerRuntime,
  mode: PeerMode,
  store = "memory",
): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "production" };
  let command: string[];
  if (runtime === "bun") command = [BUN, SOURCE, String(port), mode, store];
  else command = ["node", "--expose-gc", bundleForNode(SOURCE), String(port), mode, store];
  const child = startChild(`sdk-server (${runtime})`, command, env);
  await child.line(/sdk-server listening/, 20_000);
  return { child, port };
}
