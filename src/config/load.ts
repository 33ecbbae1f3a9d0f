// Loads the configuration once: JSON file, then A2A_* environment, then schema defaults; fails listing every problem.
// Reads only the file and the environment the caller passes in (never process.env or argv); returns a frozen Config.
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { KindGuard, type Static, type TObject, type TProperties, type TSchema, Type } from "@sinclair/typebox";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { Value } from "@sinclair/typebox/value";
import { parseAllowHost } from "./allow-hosts.ts";
import { closest } from "./closest.ts";
import { compileJsonSchema } from "./json-schema.ts";
import {
  type Config,
  type ConfigEnvironmentVariable,
  ConfigSchema,
  denyPatternRegExp,
  ExtendedCardSchema,
  GuardrailsSchema,
  LlmSchema,
  PushSchema,
  RedisSchema,
  ServerSchema,
  SkillSchema,
  WorkerSchema,
} from "./schema.ts";

export const LoadConfigOptionsSchema = Type.Object({
  file: Type.Optional(Type.String({ description: "Path of a JSON config file; else env.A2A_CONFIG when set." })),
  env: Type.Record(Type.String(), Type.Union([Type.String(), Type.Undefined()]), {
    description: "The environment to read A2A_* variables and REDIS_URL from (the entry file passes process.env).",
  }),
});
export type LoadConfigOptions = Static<typeof LoadConfigOptionsSchema>;

/** The configuration is unusable; `problems` holds one line per problem, each naming its path. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly problems: string[];

  constructor(problems: string[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(`Invalid configuration (${count}):\n${problems.map((problem) => `  ${problem}`).join("\n")}`);
    this.problems = problems;
  }
}

type EnvValueKind = "number" | "boolean" | "string" | "list";
type EnvBinding = ConfigEnvironmentVariable & { segments: string[]; kind: EnvValueKind };

/** Other names a key is read from, weaker than its A2A_* name and stronger than the file. */
const ENV_ALIASES: Readonly<Record<string, readonly string[]>> = {
  "redis.url": ["REDIS_URL"],
  "tracing.serviceName": ["OTEL_SERVICE_NAME"],
};

/** `server.blockingWaitSeconds` → `A2A_SERVER_BLOCKING_WAIT_SECONDS`. */
function envName(segments: readonly string[]): string {
  return `A2A_${segments.map((segment) => segment.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()).join("_")}`;
}

function envKind(schema: TSchema): EnvValueKind | undefined {
  if (KindGuard.IsNumber(schema) || KindGuard.IsInteger(schema)) return "number";
  if (KindGuard.IsBoolean(schema)) return "boolean";
  if (KindGuard.IsString(schema)) return "string";
  if (KindGuard.IsUnion(schema) && schema.anyOf.every((variant) => KindGuard.IsLiteralString(variant))) return "string";
  if (KindGuard.IsArray(schema) && KindGuard.IsString(schema.items)) return "list";
  // A list whose items may be strings or objects (redis.sentinels: host:port or {host, port}) takes strings from env.
  if (KindGuard.IsArray(schema) && KindGuard.IsUnion(schema.items) && schema.items.anyOf.some(KindGuard.IsString))
    return "list";
  return undefined; // arrays of objects (profiles) and records come from the file only
}

function collectBindings(schema: TSchema, segments: string[], out: EnvBinding[]): EnvBinding[] {
  if (KindGuard.IsObject(schema)) {
    for (const [key, child] of Object.entries(schema.properties)) collectBindings(child, [...segments, key], out);
    return out;
  }
  const kind = envKind(schema);
  if (kind === undefined || segments.length === 0) return out;
  const row = { path: segments.join("."), description: String(schema.description ?? ""), default: schema.default };
  out.push({ ...row, env: envName(segments), segments, kind });
  for (const alias of ENV_ALIASES[row.path] ?? []) out.push({ ...row, env: alias, segments, kind });
  return out;
}

const ENV_BINDINGS: readonly EnvBinding[] = collectBindings(ConfigSchema, [], []);

/** Every environment variable that sets a config key, derived from the schema (aliases such as REDIS_URL included). */
export function configEnvironmentVariables(): ConfigEnvironmentVariable[] {
  return ENV_BINDINGS.map(({ path, env, description, default: value }) => ({ path, env, description, default: value }));
}

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

function convertEnv(binding: EnvBinding, raw: string): { value: unknown } | { problem: string } {
  const text = raw.trim();
  switch (binding.kind) {
    case "number": {
      const value = Number(text);
      return text !== "" && Number.isFinite(value)
        ? { value }
        : { problem: `${binding.env} must be a number (got ${JSON.stringify(raw)})` };
    }
    case "boolean": {
      const word = text.toLowerCase();
      if (TRUE_WORDS.has(word)) return { value: true };
      if (FALSE_WORDS.has(word)) return { value: false };
      return { problem: `${binding.env} must be true or false (got ${JSON.stringify(raw)})` };
    }
    case "list":
      return { value: text.split(",").flatMap((item) => (item.trim() === "" ? [] : [item.trim()])) };
    case "string":
      return { value: raw };
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readConfigFile(file: string): { value: Record<string, unknown> } | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return { problem: `config file ${JSON.stringify(file)}: cannot be read (${messageOf(error)})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `config file ${JSON.stringify(file)}: is not valid JSON (${messageOf(error)})` };
  }
  return isRecord(value) ? { value } : { problem: `config file ${JSON.stringify(file)}: must hold a JSON object` };
}

/**
 * Load, default and validate the configuration. Precedence per key: A2A_* variable, then an alias (REDIS_URL), then
 * the file, then the schema default. Profiles come from the file only.
 * @throws ConfigError listing every problem: unreadable file, bad env value, unknown key, constraint, relation.
 */
export function loadConfig(options: LoadConfigOptions): Config {
  const problems: string[] = [];
  const file = options.file ?? (options.env.A2A_CONFIG || undefined);
  let input: Record<string, unknown> = {};
  if (file !== undefined) {
    const read = readConfigFile(file);
    if ("problem" in read) problems.push(read.problem);
    else input = withHandlersFromFile(read.value, file);
  }

  const reported = new Set<string>();
  const envSources = new Map<string, string>();
  const report = (pointer: string, message: string): void => {
    if (reported.has(pointer)) return; // one problem per key: the first is the most telling
    reported.add(pointer);
    // An item of a list set from the environment (push.allowHosts[1]) names the variable of its list.
    const source = envSources.get(pointer) ?? envSources.get(pointer.replace(/\/\d+$/, ""));
    problems.push(`${label(pointer, input)}: ${message}${source === undefined ? "" : ` (from ${source})`}`);
  };

  const applied = new Set<string>();
  for (const binding of ENV_BINDINGS) {
    const raw = options.env[binding.env];
    if (raw === undefined || applied.has(binding.path)) continue;
    applied.add(binding.path);
    const pointer = `/${binding.segments.join("/")}`;
    const converted = convertEnv(binding, raw);
    if ("problem" in converted) report(pointer, converted.problem);
    else if (setAt(input, binding.segments, converted.value)) envSources.set(pointer, binding.env);
  }

  replaceArraysGivenForObjects(ConfigSchema, input, "", report);
  const value: unknown = Value.Default(ConfigSchema, input);
  for (const error of Value.Errors(ConfigSchema, value)) report(error.path, describe(error));
  checkRelations(value, report);

  if (problems.length > 0) throw new ConfigError(problems);
  if (!Value.Check(ConfigSchema, value)) throw new ConfigError(["config: does not match the schema"]);
  return deepFreeze(value);
}

/** Handler module paths in the file are relative to the file (package names stay as they are). */
function withHandlersFromFile(input: Record<string, unknown>, file: string): Record<string, unknown> {
  const { handlers } = input;
  if (!Array.isArray(handlers)) return input;
  const fromFile = (entry: unknown) =>
    typeof entry === "string" && /^\.\.?\//.test(entry) ? resolve(dirname(file), entry) : entry;
  return { ...input, handlers: handlers.map(fromFile) };
}

/** Sets a nested key, creating missing sections; false when a section is not an object (the schema check says so). */
function setAt(target: Record<string, unknown>, segments: readonly string[], value: unknown): boolean {
  let node = target;
  for (const key of segments.slice(0, -1)) {
    const next = node[key] ?? {};
    if (!isRecord(next)) return false;
    node[key] = next;
    node = next;
  }
  const last = segments.at(-1);
  if (last === undefined) return false;
  node[last] = value;
  return true;
}

type Report = (pointer: string, message: string) => void;

/** Value.Default would merge an array into an object's default ({} + [x] → {"0": x}) and hide the mistake. */
function replaceArraysGivenForObjects(schema: TSchema, value: unknown, pointer: string, report: Report): void {
  if (KindGuard.IsObject(schema) && isRecord(value)) {
    for (const [key, child] of Object.entries(schema.properties)) {
      const item = value[key];
      if (KindGuard.IsObject(child) && Array.isArray(item)) {
        report(`${pointer}/${key}`, `must be an object (got ${shown(item)})`);
        value[key] = null;
      } else replaceArraysGivenForObjects(child, item, `${pointer}/${key}`, report);
    }
  } else if (KindGuard.IsArray(schema) && Array.isArray(value)) {
    value.forEach((item, index) => {
      if (KindGuard.IsObject(schema.items) && Array.isArray(item)) {
        report(`${pointer}/${index}`, `must be an object (got ${shown(item)})`);
        value[index] = null;
      } else replaceArraysGivenForObjects(schema.items, item, `${pointer}/${index}`, report);
    });
  }
}

/** Constraints between keys and on string contents that the schema cannot express; checked on valid keys only. */
function checkRelations(config: unknown, report: Report): void {
  if (!isRecord(config)) return;
  const stream = validKeys(ServerSchema, config.server, ["streamFrameMaxBytes", "streamBufferMaxBytes"]);
  if (stream !== undefined && stream.streamBufferMaxBytes < stream.streamFrameMaxBytes)
    report(
      "/server/streamBufferMaxBytes",
      `must be at least server.streamFrameMaxBytes (${stream.streamFrameMaxBytes}) (got ${stream.streamBufferMaxBytes})`,
    );
  const buffers = validKeys(ServerSchema, config.server, ["streamBufferMaxBytes", "streamBuffersMaxBytes"]);
  if (buffers !== undefined && buffers.streamBuffersMaxBytes < buffers.streamBufferMaxBytes)
    report(
      "/server/streamBuffersMaxBytes",
      `must be at least server.streamBufferMaxBytes (${buffers.streamBufferMaxBytes}) (got ${buffers.streamBuffersMaxBytes})`,
    );
  const idle = validKeys(ServerSchema, config.server, [
    "idleTimeoutSeconds",
    "blockingWaitSeconds",
    "streamKeepaliveSeconds",
  ]);
  if (idle !== undefined && idle.idleTimeoutSeconds !== 0) {
    const { idleTimeoutSeconds, blockingWaitSeconds, streamKeepaliveSeconds } = idle;
    if (idleTimeoutSeconds <= Math.max(blockingWaitSeconds, streamKeepaliveSeconds))
      report(
        "/server/idleTimeoutSeconds",
        `must exceed server.blockingWaitSeconds (${blockingWaitSeconds}) and server.streamKeepaliveSeconds ` +
          `(${streamKeepaliveSeconds}), or be 0 to derive it (got ${idleTimeoutSeconds})`,
      );
  }
  const url = validKeys(ServerSchema, config.server, ["publicUrl"])?.publicUrl;
  if (url !== undefined && url !== "") checkUrl("/server/publicUrl", url, HTTP, report);
  const beat = validKeys(WorkerSchema, config.worker, ["heartbeatSeconds", "livenessSeconds"]);
  if (beat !== undefined && beat.heartbeatSeconds >= beat.livenessSeconds)
    report(
      "/worker/heartbeatSeconds",
      `must be lower than worker.livenessSeconds (${beat.livenessSeconds}) (got ${beat.heartbeatSeconds})`,
    );
  const memory = validKeys(WorkerSchema, config.worker, ["actorMaxMemoryMb"])?.actorMaxMemoryMb;
  if (memory !== undefined && memory > 0 && memory < MIN_ACTOR_MEMORY_MB)
    report(
      "/worker/actorMaxMemoryMb",
      `must be 0 (no limit) or at least ${MIN_ACTOR_MEMORY_MB}: an idle actor holds about 70 MiB (got ${memory})`,
    );
  const allowHosts = validKeys(PushSchema, config.push, ["allowHosts"])?.allowHosts;
  allowHosts?.forEach((entry, index) => {
    const read = parseAllowHost(entry);
    if (!read.ok) report(`/push/allowHosts/${index}`, `${read.problem} (got ${JSON.stringify(entry)})`);
  });
  const redisUrl = validKeys(RedisSchema, config.redis, ["url"])?.url;
  if (redisUrl !== undefined) checkUrl("/redis/url", redisUrl, ["redis:", "rediss:", "unix:"], report);
  const topology = validKeys(RedisSchema, config.redis, ["cluster", "sentinels"]);
  if (topology !== undefined && topology.cluster.length > 0 && topology.sentinels.length > 0)
    report("/redis/sentinels", "must be empty when redis.cluster is set (a Redis Cluster fails over by itself)");
  if (redisUrl !== undefined && URL.canParse(redisUrl) && new URL(redisUrl).protocol === "unix:")
    checkSocketUrl(redisUrl, topology !== undefined && topology.cluster.length + topology.sentinels.length > 0, report);
  if (Array.isArray(config.profiles)) checkProfiles(config.profiles, report);
}

/** The given keys of a section when each one is valid on its own (problems elsewhere in it do not matter). */
function validKeys<T extends TObject, const K extends keyof Static<T> & string>(
  schema: T,
  section: unknown,
  keys: readonly K[],
): Pick<Static<T>, K> | undefined {
  if (!isRecord(section)) return undefined;
  const properties: TProperties = schema.properties;
  const valid = keys.every((key) => {
    const property = properties[key];
    return property !== undefined && Value.Check(property, section[key]);
  });
  return valid ? (section as Pick<Static<T>, K>) : undefined;
}

const HTTP = ["http:", "https:"];
/** The lowest non-zero worker.actorMaxMemoryMb: below it an idle actor would be killed as soon as it started. */
const MIN_ACTOR_MEMORY_MB = 128;

function checkProfiles(profiles: unknown[], report: Report): void {
  const firstIndexByName = new Map<string, number>();
  profiles.forEach((profile, index) => {
    if (!isRecord(profile)) return;
    const at = `/profiles/${index}`;
    if (typeof profile.name === "string") {
      const first = firstIndexByName.get(profile.name);
      if (first === undefined) firstIndexByName.set(profile.name, index);
      else report(`${at}/name`, `duplicate profile name ${JSON.stringify(profile.name)}: also profiles[${first}]`);
    }
    if (Value.Check(LlmSchema, profile.llm)) checkUrl(`${at}/llm/baseUrl`, profile.llm.baseUrl, HTTP, report);
    if (Value.Check(SkillSchema, profile.skill) && Value.Check(ExtendedCardSchema, profile.extendedCard)) {
      const ids = new Set([profile.skill.id]);
      profile.extendedCard.skills.forEach((skill, skillIndex) => {
        if (ids.has(skill.id))
          report(
            `${at}/extendedCard/skills/${skillIndex}/id`,
            `duplicate skill id ${JSON.stringify(skill.id)} in the card`,
          );
        ids.add(skill.id);
      });
    }
    for (const field of ["inputSchema", "outputSchema"] as const) {
      const schema = profile[field];
      if (!isRecord(schema)) continue;
      try {
        compileJsonSchema(schema);
      } catch (error) {
        report(`${at}/${field}`, `not a usable JSON Schema: ${messageOf(error)}`);
      }
    }
    const guardrails = profile.guardrails;
    if (!Value.Check(GuardrailsSchema, guardrails)) return;
    guardrails.denyPatterns.forEach((pattern, patternIndex) => {
      try {
        denyPatternRegExp(pattern);
      } catch (error) {
        report(`${at}/guardrails/denyPatterns/${patternIndex}`, `invalid regular expression: ${messageOf(error)}`);
      }
    });
    if (guardrails.moderation !== undefined)
      checkUrl(`${at}/guardrails/moderation/baseUrl`, guardrails.moderation.baseUrl, HTTP, report);
  });
}

function checkUrl(pointer: string, text: string, protocols: readonly string[], report: Report): void {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || !protocols.includes(url.protocol))
    report(
      pointer,
      `must be a ${new Intl.ListFormat("en", { type: "disjunction" }).format(protocols.map((p) => `${p}//`))} URL (got ${JSON.stringify(text)})`,
    );
}

/**
 * A Redis on this host over its Unix socket: unix:///path/to/redis.sock, with credentials on the host `localhost`
 * (unix://user:password@localhost/path) and the database as ?db=N. ioredis reads any other host as the start of a
 * relative path and any query parameter as an option (a password there would be shown unmasked), so both are refused.
 */
function checkSocketUrl(text: string, topology: boolean, report: Report): void {
  const url = new URL(text);
  const problems: string[] = [];
  if (url.hostname !== "" && url.hostname !== "localhost")
    problems.push(
      `names the host ${JSON.stringify(url.hostname)}: a socket's path starts after unix:// (unix:///path)`,
    );
  if (url.port !== "") problems.push("names a port: a socket has none");
  if (url.pathname === "" || url.pathname === "/") problems.push("names no socket path");
  const unknown = [...url.searchParams.keys()].filter((key) => key !== "db");
  if (unknown.length > 0) problems.push(`has query parameters other than db (${unknown.join(", ")})`);
  const db = url.searchParams.get("db");
  if (db !== null && !/^\d+$/.test(db)) problems.push(`has db=${JSON.stringify(db)}, not a database number`);
  if (topology)
    problems.push("is a socket, while redis.cluster or redis.sentinels name the servers (use redis:// or rediss://)");
  if (problems.length > 0)
    report("/redis/url", `${problems.join("; ")} (a Unix socket URL: unix:///path/to/redis.sock[?db=N])`);
}

/** `/profiles/1/guardrails/denyPatterns/0` → `profiles[1] (name "support").guardrails.denyPatterns[0]`. */
function label(pointer: string, root: unknown): string {
  const segments = pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"));
  let text = "";
  let node = root;
  for (const segment of segments) {
    const isIndex = Array.isArray(node) && /^\d+$/.test(segment);
    text += isIndex ? `[${segment}]` : text === "" ? segment : `.${segment}`;
    node = Array.isArray(node) ? node[Number(segment)] : isRecord(node) ? node[segment] : undefined;
    if (isIndex && text === `profiles[${segment}]` && isRecord(node) && typeof node.name === "string")
      text += ` (name ${JSON.stringify(node.name)})`;
  }
  return text === "" ? "config" : text;
}

function shown(value: unknown): string {
  const text = value === undefined ? "nothing" : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function describe(error: ValueError): string {
  const { schema, value } = error;
  const got = ` (got ${shown(value)})`;
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties: {
      const key = error.path.split("/").at(-1) ?? "";
      const suggestion = closest(key, Object.keys(KindGuard.IsObject(schema) ? schema.properties : {}));
      return `unknown key${suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`}`;
    }
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `must be at least ${schema.minimum}${got}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `must be at most ${schema.maximum}${got}`;
    case ValueErrorType.Integer:
      return `must be an integer${got}`;
    case ValueErrorType.Number:
      return `must be a number${got}`;
    case ValueErrorType.String:
      return `must be a string${got}`;
    case ValueErrorType.Boolean:
      return `must be true or false${got}`;
    case ValueErrorType.Array:
      return `must be an array${got}`;
    case ValueErrorType.Object:
      return `must be an object${got}`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${schema.minItems} item(s)`;
    case ValueErrorType.StringMinLength:
      return schema.minLength === 1 ? "must not be empty" : `must have at least ${schema.minLength} characters${got}`;
    case ValueErrorType.StringPattern:
      return `${typeof schema.errorMessage === "string" ? schema.errorMessage : `must match ${schema.pattern}`}${got}`;
    case ValueErrorType.Union:
      if (KindGuard.IsUnion(schema) && schema.anyOf.every((variant) => KindGuard.IsLiteral(variant)))
        return `must be one of ${schema.anyOf.map((variant) => JSON.stringify(variant.const)).join(", ")}${got}`;
      return `${error.message}${got}`;
    default:
      return `${error.message}${got}`;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
