// The only code that runs Lua: reads each script file once (with its `-- @include "<name>"` lines replaced by the
// snippets in lua/include/), registers it with ioredis (EVALSHA, falling back to EVAL on NOSCRIPT, also inside
// pipelines), and turns each script's definition (lua/<name>.ts: its keys and arguments by name, in the order the
// file's header gives them, and its reply decoder) into a typed function.
import { readFileSync } from "node:fs";
import type { ChainableCommander, Cluster, Redis } from "ioredis";

/** A Redis connection that scripts can run on: a single node or a cluster. */
export type RedisLike = Redis | Cluster;

const SCRIPT_FILES = {
  accept: "accept-15.lua",
  resume: "resume-17.lua",
  transition: "transition-22.lua",
  claim: "claim-8.lua",
  promote: "promote-7.lua",
  renew: "renew-2.lua",
  release: "release-3.lua",
  requeueLost: "requeueLost-3.lua",
  deadLetter: "deadLetter-2.lua",
  cancel: "cancel-18.lua",
  purge: "purge-12.lua",
  expireInput: "expireInput-13.lua",
  snapshot: "snapshot-3.lua",
  head: "head-2.lua",
  heartbeat: "heartbeat-1.lua",
  lease: "lease-1.lua",
  leasePair: "leasePair-2.lua",
  pushClaim: "pushClaim-1.lua",
  pushHead: "pushHead-3.lua",
  pushSettle: "pushSettle-6.lua",
  pushMigrate: "pushMigrate-5.lua",
  pushConfig: "pushConfig-4.lua",
  pushConfigDelete: "pushConfigDelete-3.lua",
  rateLimit: "rateLimit-1.lua",
  rotateKey: "rotateKey-1.lua",
  weigh: "weigh-n.lua",
} as const;

/** The key count a script file's name gives (`-3.lua`), or undefined for `-n.lua`: as many keys as the call passes. */
export function keyCountOf(file: string): number | undefined {
  const count = /-(\d+)\.lua$/.exec(file)?.[1];
  return count === undefined ? undefined : Number(count);
}

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

/** What a script answers, as ioredis gives it. */
export type ScriptReply = number | string | null | ScriptReply[];

/** A value passed in ARGV (Redis receives strings; numbers are written in decimal). */
export type ScriptArg = string | number;

interface LoadedScript {
  readonly lua: string;
  /** Undefined: the call passes its key count first (a `-n.lua` script). */
  readonly numberOfKeys: number | undefined;
}

const loaded = new Map<ScriptName, LoadedScript>();

function script(name: ScriptName): LoadedScript {
  let found = loaded.get(name);
  if (!found) {
    const file = SCRIPT_FILES[name];
    const lua = expandIncludes(readLua(file));
    found = { lua, numberOfKeys: keyCountOf(file) };
    loaded.set(name, found);
  }
  return found;
}

type ScriptCaller = (...args: ScriptArg[]) => Promise<ScriptReply>;

const registered = new WeakSet<object>();

/**
 * Registers every script on a connection once; ioredis then sends EVALSHA and recovers from NOSCRIPT by itself. Call
 * it before the connection's first command: a pipeline carries only the scripts registered when it was opened, so a
 * script queued on a pipeline opened before its first call would fail.
 */
export function registerScripts(redis: RedisLike): void {
  if (registered.has(redis)) return;
  for (const name of Object.keys(SCRIPT_FILES) as ScriptName[]) {
    const { lua, numberOfKeys } = script(name);
    redis.defineCommand(`a2a_${name}`, numberOfKeys === undefined ? { lua } : { lua, numberOfKeys });
  }
  registered.add(redis);
}

/** A pipeline of `redis` in which every script can be queued (ioredis copies the scripts a connection has). */
export function scriptPipeline(redis: RedisLike): ChainableCommander {
  registerScripts(redis);
  return redis.pipeline();
}

/** The Lua source of a script as Redis runs it, for tools that run it outside ioredis (the redis-benchmark ceiling). */
export function scriptSource(name: ScriptName): string {
  return script(name).lua;
}

/** A script answered something its header does not document. */
export class UnexpectedScriptReplyError extends Error {
  constructor(name: ScriptName, reply: ScriptReply) {
    super(`unexpected script reply ${JSON.stringify(reply)} from ${name}`);
    this.name = "UnexpectedScriptReplyError";
  }
}

/**
 * How a script is called: its KEYS and its ARGV by name, each list in the order of the script's header (written here
 * once), and the decoder of its reply. A script that takes a variable number of values after its named arguments
 * (transition's events) gets them as the call's `rest`; one whose keys are as many as the call has (a `-n.lua` file,
 * whose definition names no keys) gets its keys as the call's `rest`, before its arguments.
 */
export interface ScriptDefinition<K extends string, A extends string, R> {
  readonly name: ScriptName;
  readonly keys: readonly K[];
  readonly args: readonly A[];
  readonly decode: (reply: ScriptReply) => R;
}

/** A script's typed function: named keys and arguments in, its decoded reply out. */
export interface Script<K extends string, A extends string, R> {
  readonly name: ScriptName;
  /** KEYS and ARGV by name, in the script's order. */
  readonly keys: readonly K[];
  readonly args: readonly A[];
  /** Runs the script (EVALSHA, EVAL after NOSCRIPT) and decodes its reply. */
  run(
    redis: RedisLike,
    keys: Readonly<Record<K, string>>,
    args: Readonly<Record<A, ScriptArg>>,
    rest?: readonly ScriptArg[],
  ): Promise<R>;
  /** Queues the script in a pipeline from `scriptPipeline`; `decode` reads its reply from the pipeline's results. */
  queue(
    pipeline: ChainableCommander,
    keys: Readonly<Record<K, string>>,
    args: Readonly<Record<A, ScriptArg>>,
    rest?: readonly ScriptArg[],
  ): void;
  decode(reply: ScriptReply): R;
  /** KEYS then ARGV as Redis receives them, for tools that call the script outside ioredis (redis-benchmark). */
  argv(
    keys: Readonly<Record<K, string>>,
    args: Readonly<Record<A, ScriptArg>>,
    rest?: readonly ScriptArg[],
  ): ScriptArg[];
}

/** A script's typed function from its definition; throws when the definition's key count is not the file name's. */
export function defineScript<const K extends string, const A extends string, R>(
  definition: ScriptDefinition<K, A, R>,
): Script<K, A, R> {
  const { name, keys: keyNames, args: argNames, decode } = definition;
  const numberOfKeys = keyCountOf(SCRIPT_FILES[name]);
  const variadic = numberOfKeys === undefined;
  if (variadic ? keyNames.length > 0 : keyNames.length !== numberOfKeys) {
    throw new Error(`script ${name} takes ${numberOfKeys ?? "n"} keys, its definition names ${keyNames.length}`);
  }
  const command = `a2a_${name}`;
  const positional = (
    keys: Readonly<Record<K, string>>,
    args: Readonly<Record<A, ScriptArg>>,
    rest: readonly ScriptArg[],
  ): ScriptArg[] => {
    if (variadic) return [rest.length, ...rest, ...argNames.map((arg) => args[arg])];
    const all = new Array<ScriptArg>(keyNames.length + argNames.length + rest.length);
    let i = 0;
    for (const key of keyNames) all[i++] = keys[key];
    for (const arg of argNames) all[i++] = args[arg];
    for (const value of rest) all[i++] = value;
    return all;
  };
  const caller = (target: object): ScriptCaller => {
    const call = (target as Record<string, ScriptCaller | undefined>)[command];
    if (!call) throw new Error(`script ${name} is not registered on this connection or pipeline`);
    return call;
  };
  return {
    name,
    keys: keyNames,
    args: argNames,
    async run(redis, keys, args, rest = []) {
      registerScripts(redis);
      return decode(await caller(redis).apply(redis, positional(keys, args, rest)));
    },
    queue(pipeline, keys, args, rest = []) {
      caller(pipeline).apply(pipeline, positional(keys, args, rest));
    },
    decode,
    argv: (keys, args, rest = []) => positional(keys, args, rest),
  };
}

/** The meaning of a code reply in a script's table of codes; any other reply is an UnexpectedScriptReplyError. */
export function codeMeaning<const T extends Readonly<Record<number, string>>>(
  name: ScriptName,
  codes: T,
  reply: ScriptReply,
): T[keyof T] {
  const meaning = typeof reply === "number" ? codes[reply] : undefined;
  if (meaning === undefined) throw new UnexpectedScriptReplyError(name, reply);
  return meaning as T[keyof T];
}

/** A reply's element that must be an integer. */
export function replyNumber(name: ScriptName, reply: ScriptReply | undefined): number {
  if (typeof reply === "number") return reply;
  throw new UnexpectedScriptReplyError(name, reply ?? null);
}

/** A reply's element that must be a string. */
export function replyString(name: ScriptName, reply: ScriptReply | undefined): string {
  if (typeof reply === "string") return reply;
  throw new UnexpectedScriptReplyError(name, reply ?? null);
}

/** A reply's element that must be a list of strings (a hash read flat, a list of ids). */
export function replyStrings(name: ScriptName, reply: ScriptReply | undefined): string[] {
  if (Array.isArray(reply) && reply.every((item) => typeof item === "string")) return reply as string[];
  throw new UnexpectedScriptReplyError(name, reply ?? null);
}
