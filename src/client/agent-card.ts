// Fetches an agent card (the public, unauthenticated GET) and picks the JSON-RPC interface a 1.0 client can call.
import type { AgentCard, AgentInterface } from "../protocol/index.ts";
import { ConnectionError, ResponseError } from "./client-errors.ts";

/** Where A2A publishes a card, relative to the agent's base URL. */
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The card URL for a base URL; a URL that already ends in `.json` is taken as the card's own. */
export function agentCardUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, "");
  return trimmed.endsWith(".json") ? trimmed : `${trimmed}${AGENT_CARD_PATH}`;
}

/** GETs and shape-checks a card; throws ConnectionError or ResponseError. */
export async function fetchAgentCard(
  baseUrl: string,
  options: { fetch?: (input: string, init: RequestInit) => Promise<Response>; signal?: AbortSignal } = {},
): Promise<AgentCard> {
  const url = agentCardUrl(baseUrl);
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  let response: Response;
  try {
    response = await fetcher(url, {
      headers: { Accept: "application/json", "A2A-Version": "1.0" },
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } catch (error) {
    throw new ConnectionError(url, `cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (!response.ok) throw new ResponseError(`no agent card at ${url}: HTTP ${response.status}`, response.status);
  let card: unknown;
  try {
    card = await response.json();
  } catch (error) {
    throw new ResponseError(`the agent card at ${url} is not JSON`, response.status, { cause: error });
  }
  if (!isRecord(card) || typeof card.name !== "string" || !Array.isArray(card.supportedInterfaces))
    throw new ResponseError(`the document at ${url} is not an A2A 1.0 agent card`, response.status);
  return card as AgentCard;
}

/** The first JSONRPC interface of protocol version 1.x, in the card's order of preference. */
export function jsonRpcInterface(card: AgentCard): AgentInterface | undefined {
  return card.supportedInterfaces.find(
    (item) => item.protocolBinding.toUpperCase() === "JSONRPC" && /^1(\.|$)/.test(item.protocolVersion),
  );
}
