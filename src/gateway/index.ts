// The gateway area: the A2A bindings over HTTP (JSON-RPC in A2A 1.0 and 0.3, HTTP+JSON), on one set of operations.
// It accepts and waits; it never runs a task (actors do, and the two meet only through Redis). Other areas import the
// gateway only from here.
export {
  AgentCards,
  buildAgentCard,
  CARD_MAX_AGE_SECONDS,
  PROTOCOL_VERSION,
  profilePath,
  V03_PROTOCOL_VERSION,
} from "./agent-card.ts";
export { createGatewayApp, type GatewayApp, routable } from "./app.ts";
export { API_KEY_HEADER, AuthenticationBusyError, Authenticator, credentialsOf } from "./authenticator.ts";
export { serveJsonRpc } from "./bindings/jsonrpc.ts";
export { JSONRPC_VERSIONS, V03_DIALECT } from "./bindings/jsonrpc-0.3.ts";
export { type JsonRpcDialect, V1_DIALECT } from "./bindings/jsonrpc-dialect.ts";
export { type ErrorAnswer, errorAnswer, errorResponse, jsonRpcFraming } from "./bindings/jsonrpc-frames.ts";
export { serveRest } from "./bindings/rest.ts";
export { answerMediaType, REST_FRAMING, type RestErrorBody, restErrorBody } from "./bindings/rest-frames.ts";
export { matchRoute, type RestRoute } from "./bindings/rest-routes.ts";
export { type EventSink, SseEventSink, type SseFraming } from "./event-sink.ts";
export { type GatewayContext, type ProfileRuntime, profileRuntimes } from "./gateway-context.ts";
export { healthz, type Readiness, readyz, type ShardReadiness } from "./health.ts";
export {
  JournalTail,
  type JournalTailOptions,
  type KnownTask,
  type TailMark,
  type TaskFollower,
  type WaitOutcome,
} from "./journal-tail.ts";
export {
  admit,
  checkVersion,
  profileOf,
  RequestAccount,
  requestedVersion,
  SERVED_VERSIONS,
  type ServedVersion,
} from "./request-steps.ts";
export { Revocations, type RevocationsOptions } from "./revocations.ts";
export { type Served, type ServeOptions, serve } from "./serve.ts";
export {
  boundedFrame,
  commentFrame,
  dataFrame,
  errorEventFrame,
  FRAME_TOO_LARGE_KEY,
  type FramePosition,
  fittingFrames,
  KEEPALIVE_COMMENT,
  OPEN_COMMENT,
  STREAM_END_KEY,
  splitArtifactUpdate,
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
export {
  closesStream,
  compareEntryIds,
  JOURNAL_BATCH,
  type StreamPosition,
  type TaskStreamInput,
  type TaskStreamSource,
  taskStreamSource,
} from "./task-stream.ts";
export { DEFAULT_WAITING_LEASE_TTL_MS, WaitingLeases, type WaitingLeasesOptions } from "./waiting-leases.ts";
