// `a2a-runtime clients add|list|revoke|rotate|limit`: client records in Redis. The API key is shown once by `add` (and
// a new one by `rotate`) and never again; `list` shows no key and no hash. A record's own limits win over the
// configuration's `clients.*` defaults.
import { type Command, InvalidArgumentError } from "commander";
import { type ClientLimits, type ClientRecord, ClientRegistry, KeySpace, type LimitChange } from "../journal/index.ts";
import type { CliContext } from "./context.ts";

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number, 0 or more");
  return Number(value);
}

/** The longest grace a rotated key may keep working: a year. */
const MAX_GRACE_SECONDS = 365 * 24 * 3600;

function graceSeconds(value: string): number {
  const seconds = nonNegativeInteger(value);
  if (seconds > MAX_GRACE_SECONDS) throw new InvalidArgumentError(`must be at most ${MAX_GRACE_SECONDS} (a year)`);
  return seconds;
}

const BYTE_UNITS: Record<string, number> = {
  "": 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
};

/** Bytes as a whole number with an optional binary unit: 1048576, 1024KiB, 64MiB, 2GiB. */
function byteCount(value: string): number {
  const match = /^(\d+)\s*([a-z]*)$/i.exec(value.trim());
  const unit = BYTE_UNITS[(match?.[2] ?? "x").toLowerCase()];
  if (!match || unit === undefined)
    throw new InvalidArgumentError("must be a whole number of bytes, e.g. 67108864 or 64MiB");
  return Number(match[1]) * unit;
}

/** A limit option of `clients limit`: a value, or `default` to return to the configured default. */
function orDefault(parse: (value: string) => number): (value: string) => number | "default" {
  // commander turns a parser's null into "", so the default travels as the word itself
  return (value) => (value === "default" ? "default" : parse(value));
}

function profileList(value: string): string[] {
  return value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** The per-client limit options, their flags and parsers (bytes take a unit). */
const LIMIT_OPTIONS: readonly { name: keyof ClientLimits; flag: string; what: string; parse: (v: string) => number }[] =
  [
    {
      name: "maxStoredBytes",
      flag: "--max-stored-bytes <bytes>",
      what: "bytes its tasks may hold in Redis",
      parse: byteCount,
    },
    {
      name: "maxInterruptedTasks",
      flag: "--max-interrupted-tasks <n>",
      what: "tasks it may have waiting for input",
      parse: nonNegativeInteger,
    },
    {
      name: "maxRunningTasks",
      flag: "--max-running-tasks <n>",
      what: "runs of it that actors execute at once",
      parse: nonNegativeInteger,
    },
    {
      name: "requestsPerSecond",
      flag: "--requests-per-second <n>",
      what: "requests per second it may make",
      parse: nonNegativeInteger,
    },
  ];

/** Runs `action` with a registry on a connection of its own, closed afterwards. */
async function withRegistry<T>(context: CliContext, action: (registry: ClientRegistry) => Promise<T>): Promise<T> {
  const config = context.config();
  const redis = context.redis("cli");
  try {
    return await action(new ClientRegistry(redis, new KeySpace(config.redis.keyPrefix, config.redis.shards)));
  } finally {
    redis.disconnect();
  }
}

/** A limit as the table shows it: the record's own value, "none" for 0, or "default" when the record has none. */
function shown(value: number | undefined): string {
  return value === undefined ? "default" : value === 0 ? "none" : String(value);
}

function row(record: ClientRecord): string {
  const state = record.revoked ? "revoked" : "active";
  return [
    record.id,
    record.name,
    record.profiles.join(","),
    record.limit === 0 ? "none" : String(record.limit),
    ...LIMIT_OPTIONS.map((option) => shown(record[option.name])),
    state,
    record.createdAt,
  ].join("\t");
}

/** A record as `list --json` prints it: every limit present, `null` where the configured default applies. */
function asJson(record: ClientRecord): Record<string, unknown> {
  const limits = Object.fromEntries(LIMIT_OPTIONS.map((option) => [option.name, record[option.name] ?? null]));
  return { ...record, ...limits };
}

export function registerClients(program: Command, context: CliContext): void {
  const clients = program.command("clients").description("manage API clients (keys are stored hashed, shown once)");

  const add = clients
    .command("add")
    .description("create a client and print its API key once")
    .requiredOption("--name <name>", "a name for people")
    .option("--profiles <names>", "comma-separated profiles it may use (default: all)", profileList)
    .option("--limit <n>", "queued + running tasks it may have at once (0 = no limit)", nonNegativeInteger, 0);
  for (const option of LIMIT_OPTIONS) {
    add.option(option.flag, `${option.what} (0 = no limit; default: the clients.${option.name} setting)`, option.parse);
  }
  add
    .option("--json", "print {id, apiKey, name} as JSON")
    .action(
      async (
        options: { name: string; profiles?: string[]; limit: number; json?: boolean } & ClientLimits,
        command: Command,
      ) => {
        const known = new Set(context.config().profiles.map((profile) => profile.name));
        const unknown = (options.profiles ?? []).filter((name) => name !== "*" && !known.has(name));
        if (unknown.length > 0) {
          command.error(`unknown profile(s): ${unknown.join(", ")}; configured: ${[...known].join(", ")}`);
        }
        const own: ClientLimits = {};
        for (const { name } of LIMIT_OPTIONS) {
          const value = options[name];
          if (value !== undefined) own[name] = value;
        }
        const { record, apiKey } = await withRegistry(context, (registry) =>
          registry.add({
            name: options.name,
            limit: options.limit,
            ...own,
            ...(options.profiles && options.profiles.length > 0 ? { profiles: options.profiles } : {}),
          }),
        );
        if (options.json) {
          context.print(JSON.stringify({ id: record.id, apiKey, name: record.name }));
          return;
        }
        context.print(`client ${record.id} (${record.name}), profiles ${record.profiles.join(",")}`);
        context.print(`API key (shown once, store it now): ${apiKey}`);
      },
    );

  clients
    .command("list")
    .description("list clients and their limits (never their keys)")
    .option("--json", "print the records as JSON (a limit of null: the configured default applies)")
    .action(async (options: { json?: boolean }) => {
      const records = await withRegistry(context, (registry) => registry.list());
      if (options.json) {
        context.print(JSON.stringify(records.map(asJson)));
        return;
      }
      context.print(
        ["id", "name", "profiles", "limit", "stored bytes", "interrupted", "running", "rps", "state", "created"].join(
          "\t",
        ),
      );
      for (const record of records) context.print(row(record));
    });

  clients
    .command("revoke <id>")
    .description("revoke a client: its key stops working within a second; its tasks stay until retention")
    .action(async (id: string, _options: unknown, command: Command) => {
      const revoked = await withRegistry(context, (registry) => registry.revoke(id));
      if (!revoked) command.error(`no client with id ${id}`);
      context.print(`client ${id} revoked`);
    });

  clients
    .command("rotate <id>")
    .description(
      "give a client a new API key, printed once; its tasks stay its own. The old key stops working within a second " +
        "(and the client's open streams are closed), or after --grace seconds",
    )
    .option("--grace <seconds>", "how long the old key keeps working (default: 0, it stops at once)", graceSeconds)
    .option("--json", "print {id, apiKey, previousKeyUntil} as JSON (previousKeyUntil: null when it stopped)")
    .action(async (id: string, options: { grace?: number; json?: boolean }, command: Command) => {
      const rotated = await withRegistry(context, (registry) => registry.rotate(id, options.grace ?? 0));
      if (rotated === undefined) command.error(`no client with id ${id}`);
      if (rotated === "revoked") command.error(`client ${id} is revoked: add a new client instead`);
      const until = rotated.previousKeyUntil?.toISOString();
      if (options.json) {
        context.print(JSON.stringify({ id, apiKey: rotated.apiKey, previousKeyUntil: until ?? null }));
        return;
      }
      context.print(`client ${id}: new API key (shown once, store it now): ${rotated.apiKey}`);
      context.print(until ? `the previous key works until ${until}` : "the previous key no longer works");
    });

  const limit = clients
    .command("limit <id> [n]")
    .description(
      "set a client's limits: n is the queued + running tasks it may have at once (0 = no limit); each option sets " +
        "its own value of a clients.* setting (0 = no limit, `default` = the setting applies again)",
    );
  for (const option of LIMIT_OPTIONS) limit.option(option.flag, `${option.what}, or default`, orDefault(option.parse));
  limit.action(
    async (
      id: string,
      value: string | undefined,
      options: { [name in keyof ClientLimits]?: number | "default" },
      command: Command,
    ) => {
      const change: LimitChange = {};
      if (value !== undefined) {
        if (!/^\d+$/.test(value)) command.error(`limit must be a whole number, 0 or more (got ${value})`);
        change.limit = Number(value);
      }
      for (const { name } of LIMIT_OPTIONS) {
        const given = options[name];
        if (given !== undefined) change[name] = given === "default" ? null : given;
      }
      if (Object.keys(change).length === 0) {
        command.error("give the limit <n> or at least one of the limit options (see --help)");
      }
      const set = await withRegistry(context, (registry) => registry.setLimits(id, change));
      if (!set) command.error(`no client with id ${id}`);
      const parts = Object.entries(change).map(
        ([name, v]) => `${name} ${v === null ? "default" : v === 0 ? "none" : v}`,
      );
      context.print(`client ${id} ${parts.join(", ")}`);
    },
  );
}
