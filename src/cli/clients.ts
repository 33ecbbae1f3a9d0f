// `a2a-runtime clients add|list|revoke|limit`: client records in Redis. The API key is shown once by `add` and never
// again; `list` shows no key and no hash.
import { type Command, InvalidArgumentError } from "commander";
import { type ClientRecord, ClientRegistry, KeySpace } from "../journal/index.ts";
import type { CliContext } from "./context.ts";

function nonNegativeInteger(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number, 0 or more");
  return Number(value);
}

function profileList(value: string): string[] {
  return value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

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

function row(record: ClientRecord): string {
  const limit = record.limit === 0 ? "none" : String(record.limit);
  const state = record.revoked ? "revoked" : "active";
  return [record.id, record.name, record.profiles.join(","), limit, state, record.createdAt].join("\t");
}

export function registerClients(program: Command, context: CliContext): void {
  const clients = program.command("clients").description("manage API clients (keys are stored hashed, shown once)");

  clients
    .command("add")
    .description("create a client and print its API key once")
    .requiredOption("--name <name>", "a name for people")
    .option("--profiles <names>", "comma-separated profiles it may use (default: all)", profileList)
    .option("--limit <n>", "queued + running tasks it may have at once (0 = no limit)", nonNegativeInteger, 0)
    .option("--json", "print {id, apiKey, name} as JSON")
    .action(async (options: { name: string; profiles?: string[]; limit: number; json?: boolean }, command: Command) => {
      const known = new Set(context.config().profiles.map((profile) => profile.name));
      const unknown = (options.profiles ?? []).filter((name) => name !== "*" && !known.has(name));
      if (unknown.length > 0) {
        command.error(`unknown profile(s): ${unknown.join(", ")}; configured: ${[...known].join(", ")}`);
      }
      const { record, apiKey } = await withRegistry(context, (registry) =>
        registry.add({
          name: options.name,
          limit: options.limit,
          ...(options.profiles && options.profiles.length > 0 ? { profiles: options.profiles } : {}),
        }),
      );
      if (options.json) {
        context.print(JSON.stringify({ id: record.id, apiKey, name: record.name }));
        return;
      }
      context.print(`client ${record.id} (${record.name}), profiles ${record.profiles.join(",")}`);
      context.print(`API key (shown once, store it now): ${apiKey}`);
    });

  clients
    .command("list")
    .description("list clients (never their keys)")
    .option("--json", "print the records as JSON")
    .action(async (options: { json?: boolean }) => {
      const records = await withRegistry(context, (registry) => registry.list());
      if (options.json) {
        context.print(JSON.stringify(records));
        return;
      }
      context.print(["id", "name", "profiles", "limit", "state", "created"].join("\t"));
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
    .command("limit <id> <n>")
    .description("set the queued + running tasks a client may have at once (0 = no limit)")
    .action(async (id: string, value: string, _options: unknown, command: Command) => {
      if (!/^\d+$/.test(value)) command.error(`limit must be a whole number, 0 or more (got ${value})`);
      const set = await withRegistry(context, (registry) => registry.setLimit(id, Number(value)));
      if (!set) command.error(`no client with id ${id}`);
      context.print(`client ${id} limit ${Number(value) === 0 ? "none" : value}`);
    });
}
