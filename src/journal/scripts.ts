// The only code that runs Lua: reads each script file once (with its `-- @include "<name>"` lines replaced by the
// snippets in lua/include/), registers it with ioredis (EVALSHA, falling back to EVAL on NOSCRIPT, also inside
// pipelines), and exposes one typed function per script.
import { readFileSync } from "node:fs";
import type { Cluster, Redis } from "ioredis";

/** A Redis connection that scripts can run on: a single node or a cluster. */
export type RedisLike = Redis | Cluster;

const SCRIPT_FILES = {
  accept: "accept-14.lua",
  resume: "resume-17.lua",
  transition: "transition-20.lua",
  claim: "claim-15.lua",
  promote: "promote-7.lua",
  renew: "renew-2.lua",
  release: "release-3.lua",
  requeueLost: "requeueLost-3.lua",
  deadLetter: "deadLetter-2.lua",
  cancel: "cancel-18.lua",
  purge: "purge-11.lua",
  expireInput: "expireInput-13.lua",
  snapshot: "snapshot-3.lua",
  heartbeat: "heartbeat-1.lua",
  lease: "lease-1.lua",
  streamLease: "streamLease-2.lua",
  pushClaim: "pushClaim-1.lua",
  pushSettle: "pushSettle-4.lua",
  pushConfig: "pushConfig-4.lua",
  pushConfigDelete: "pushConfigDelete-3.lua",
  rateLimit: "rateLimit-1.lua",
} as const;

/** A line `-- @include "<name>"` is replaced by the file lua/include/<name>.lua (functions shared by scripts). */
const INCLUDE = /^-- @include "([\w-]+)"$/gm;

function readLua(path: string): string {
  return readFileSync(new URL(`./lua/${path}`, import.meta.url), "utf8");
}

/** A script's source with its includes expanded (an included file may not include others). */
export function expandIncludes(lua: string): string {
  return lua.replace(INCLUDE, (_, name: string) => readLua(`include/${name}.lua`).trimEnd());
}

export type ScriptName = keyof typeof SCRIPT_FILES;

interface LoadedScript {
  readonly lua: string;
  readonly numberOfKeys: number;
}

const loaded = new Map<ScriptName, LoadedScript>();

function script(name: ScriptName): LoadedScript {
  let found = loaded.get(name);
  if (!found) {
    const file = SCRIPT_FILES[name];
    const lua = expandIncludes(readLua(file));
    const numberOfKeys = Number(/-(\d+)\.lua$/.exec(file)?.[1]);
    found = { lua, numberOfKeys };
    loaded.set(name, found);
  }
  return found;
}

type ScriptReply = number | string | null | ScriptReply[];

type ScriptCaller = (...args: (string | number)[]) => Promise<ScriptReply>;

const registered = new WeakSet<object>();

/**
 * Registers every script on a connection once; ioredis then sends EVALSHA and recovers from NOSCRIPT by itself. Call
 * it before the connection's first command when it auto-pipelines: a pipeline carries only the scripts registered
 * when it was opened, so a script first called in a tick whose pipeline another command opened would fail.
 */
export function registerScripts(redis: RedisLike): void {
  if (registered.has(redis)) return;
  for (const name of Object.keys(SCRIPT_FILES) as ScriptName[]) {
    const { lua, numberOfKeys } = script(name);
    redis.defineCommand(`a2a_${name}`, { lua, numberOfKeys });
  }
  registered.add(redis);
}

/**
 * Runs one script. `keys.length` must equal the number in the script's file name; every key the script touches is
 * among them (Redis Cluster routes on them).
 */
export async function runScript(
  redis: RedisLike,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<ScriptReply> {
  registerScripts(redis);
  const { numberOfKeys } = script(name);
  if (keys.length !== numberOfKeys) {
    throw new Error(`script ${name} takes ${numberOfKeys} keys, got ${keys.length}`);
  }
  const call = (redis as unknown as Record<string, ScriptCaller>)[`a2a_${name}`];
  if (!call) throw new Error(`script ${name} is not registered`);
  return await call.call(redis, ...keys, ...args);
}

/** The Lua source of a script as Redis runs it, for tools that run it outside ioredis (the redis-benchmark ceiling). */
export function scriptSource(name: ScriptName): string {
  return script(name).lua;
}

export type { ScriptReply };
