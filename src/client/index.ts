// The client area: a small A2A 1.0 JSON-RPC + SSE client (typed calls, an SSE parser over fetch's body, errors that
// carry the JSON-RPC error and its ErrorInfo reason). Used by `a2a-runtime send` and `task`; it never touches Redis.
export { A2aClient } from "./a2a-client.ts";
export { AGENT_CARD_PATH, agentCardUrl, fetchAgentCard, jsonRpcInterface } from "./agent-card.ts";
export {
  A2aClientError,
  ConnectionError,
  durationSeconds,
  type FieldViolation,
  ResponseError,
  RpcError,
  type RpcErrorInit,
  retryAfterSeconds,
} from "./client-errors.ts";
export { type CallOptions, JsonRpcTransport, type TransportOptions } from "./jsonrpc-transport.ts";
export { DEFAULT_MAX_EVENT_CHARS, parseSse, type SseEvent, type SseParseOptions } from "./sse-parser.ts";
export { artifactsText, messageText, partsText, partText, stateLabel } from "./task-text.ts";
export { TaskTracker } from "./task-tracker.ts";
