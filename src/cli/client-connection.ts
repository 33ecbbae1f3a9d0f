// The options every A2A client command shares (--url, --profile, --key) and the client they make. The key comes from
// --key or A2A_API_KEY as the entry passed it in; it is sent as a Bearer token and never printed.
import { type Command, InvalidArgumentError } from "commander";
import { A2aClient, agentCardUrl, fetchAgentCard, jsonRpcInterface, ResponseError } from "../client/index.ts";
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

/** A URL that already names a profile's endpoint (…/a2a/<profile>): its base and the profile. */
export function profileInUrl(url: string): { base: string; profile: string } | undefined {
  const match = /^(.*)\/a2a\/([^/?#]+)\/*$/.exec(url);
  return match ? { base: match[1] ?? "", profile: decodeURIComponent(match[2] ?? "") } : undefined;
}

/**
 * The endpoint to call. --url may be the gateway's base URL or a profile's endpoint (as `start` prints it); without
 * --profile, the profile is the server's first, read from its agent card (not from a local configuration, which may
 * describe another installation). Without --url, the configuration gives both.
 */
async function endpointOf(context: CliContext, options: ConnectionOptions): Promise<string> {
  if (options.url === undefined) {
    const config = context.config();
    return profileEndpoint(publicUrl(config), options.profile ?? config.profiles[0]?.name ?? "");
  }
  const named = profileInUrl(options.url);
  if (named) {
    if (options.profile !== undefined && options.profile !== named.profile)
      throw new InvalidArgumentError(
        `--url names the profile ${named.profile} and --profile names ${options.profile}: give one`,
      );
    return profileEndpoint(named.base, named.profile);
  }
  if (options.profile !== undefined) return profileEndpoint(options.url, options.profile);
  const card = await fetchAgentCard(options.url);
  const advertised = jsonRpcInterface(card)?.url;
  if (advertised === undefined)
    throw new ResponseError(`the agent card at ${agentCardUrl(options.url)} offers no A2A 1.0 JSON-RPC interface`, 200);
  const profile = profileInUrl(advertised)?.profile;
  return profile === undefined ? advertised : profileEndpoint(options.url, profile);
}

/** Builds the client; loads the configuration only when --url is missing. */
export async function connect(context: CliContext, options: ConnectionOptions): Promise<Connection> {
  const endpoint = await endpointOf(context, options);
  const envKey = context.env[API_KEY_VARIABLE];
  const key = options.key ?? (envKey === "" ? undefined : envKey);
  const client = new A2aClient({ endpoint, apiKey: key });
  return { client, hasKey: key !== undefined };
}
