// The gateway area: the A2A 1.0 JSON-RPC surface over HTTP. It accepts and waits; it never runs a task (actors do,
// and the two meet only through Redis). Other areas import the gateway only from here.
export { AgentCards, buildAgentCard, CARD_MAX_AGE_SECONDS, PROTOCOL_VERSION, profilePath } from "./agent-card.ts";
export { createGatewayApp, type GatewayApp } from "./app.ts";
export { API_KEY_HEADER, Authenticator, credentialsOf } from "./authenticator.ts";
export { checkVersion, dispatch, SERVED_VERSIONS } from "./dispatcher.ts";
export { type GatewayContext, type ProfileRuntime, profileRuntimes } from "./gateway-context.ts";
export { healthz, type Readiness, readyz, type ShardReadiness } from "./health.ts";
export { JournalTail, type JournalTailOptions, type TaskFollower, type WaitOutcome } from "./journal-tail.ts";
export {
  AUTH_REALM,
  EndpointNotFoundError,
  ERROR_DOMAIN,
  type ErrorAnswer,
  errorAnswer,
  errorResponse,
} from "./jsonrpc-errors.ts";
export { type Served, type ServeOptions, serve } from "./serve.ts";
export {
  boundedFrame,
  commentFrame,
  errorFrame,
  eventFrame,
  FRAME_TOO_LARGE_KEY,
  type FramePosition,
  KEEPALIVE_COMMENT,
  OPEN_COMMENT,
  standIn,
} from "./sse-frames.ts";
export { SSE_HEADERS, SseStream, type StreamEnd } from "./sse-stream.ts";
export { type GatewayStats, type RunningGateway, type StartGatewayOptions, startGateway } from "./start-gateway.ts";
export { StreamHub, type StreamHubOptions, tickMs } from "./stream-hub.ts";
export {
  DEFAULT_STREAM_LEASE_TTL_MS,
  type StreamLease,
  StreamLeases,
  type StreamLeasesOptions,
  type StreamLimits,
} from "./stream-leases.ts";
export { closesStream, compareEntryIds, JOURNAL_BATCH, openTaskStream, type TaskStreamInput } from "./task-stream.ts";
export { DEFAULT_WAITING_LEASE_TTL_MS, WaitingLeases, type WaitingLeasesOptions } from "./waiting-leases.ts";
