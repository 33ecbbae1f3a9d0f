// The options every A2A client command shares (--url, --profile, --key) and the client they make. The key comes from
// --key or A2A_API_KEY as the entry passed it in; it is sent as a Bearer token and never printed.
import type { Command } from "commander";
import { A2aClient } from "../client/index.ts";
import { publicUrl } from "../config/index.ts";
import type { CliContext } from "./context.ts";

export interface ConnectionOptions {
  url?: string;
  profile?: string;
  key?: string;
}

/** The environment variable that holds the API key when --key is not given. */
export const API_KEY_VARIABLE = "A2A_API_KEY";

/** Adds --url, --profile and --key to a command. */
export function withConnectionOptions(command: Command): Command {
  return command
    .option("--url <url>", "the gateway's base URL (default: server.publicUrl, or http://<host>:<port>)")
    .option("--profile <name>", "the profile to talk to (default: the first configured profile)")
    .option("--key <key>", `API key (default: $${API_KEY_VARIABLE}; prefer the variable, argv is visible to others)`);
}

export interface Connection {
  readonly client: A2aClient;
  /** Whether an API key is sent; failures hint at it when it is not. */
  readonly hasKey: boolean;
}

/** The JSON-RPC endpoint of a profile under a base URL: <base>/a2a/<profile>. */
export function profileEndpoint(baseUrl: string, profile: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/a2a/${encodeURIComponent(profile)}`;
}

/** Builds the client; loads the configuration only when --url or --profile is missing. */
export function connect(context: CliContext, options: ConnectionOptions): Connection {
  const needsConfig = options.url === undefined || options.profile === undefined;
  const config = needsConfig ? context.config() : undefined;
  const baseUrl = options.url ?? (config ? publicUrl(config) : "");
  const profile = options.profile ?? config?.profiles[0]?.name ?? "";
  const envKey = context.env[API_KEY_VARIABLE];
  const key = options.key ?? (envKey === "" ? undefined : envKey);
  const client = new A2aClient({ endpoint: profileEndpoint(baseUrl, profile), apiKey: key });
  return { client, hasKey: key !== undefined };
}
