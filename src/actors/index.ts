// The actors area: supervisor, actor processes, sweep, status and the handler API. Other areas import only this.

export { applyArtifact } from "../journal/index.ts";
export { Actor, type ActorOptions } from "./actor.ts";
export { type ApiKeys, resolveApiKeys } from "./api-keys.ts";
export { CheckedSink, type CheckedSinkOptions } from "./checked-sink.ts";
export { connectRedis } from "./connections.ts";
export {
  createOutputSink,
  JournalSink,
  type OutputSink,
  type OutputSinkOptions,
  type OutputTarget,
  TEXT_ARTIFACT_NAME,
} from "./emit-gate.ts";
export { GuardedSink, type GuardedSinkOptions, PROGRESS_INTERVAL_MS, PROGRESS_METADATA_KEY } from "./guarded-sink.ts";
export { checkHandlerModules } from "./handler-check.ts";
export { clockTool, NoWorkspaceError, readFileTool } from "./handlers/builtin-tools.ts";
export {
  builtinHandlers,
  builtinTools,
  HandlerModuleError,
  loadHandlerModules,
  loadProfileHandlers,
  unregisteredHandlersProblem,
} from "./handlers/builtins.ts";
export { echoHandler, noopHandler } from "./handlers/echo.ts";
export { faultsHandler } from "./handlers/faults.ts";
export {
  type AbortReason,
  type ArtifactChunk,
  defineHandler,
  type Emit,
  type Handler,
  type HandlerContext,
  HandlerFailure,
  HandlerRegistry,
  type HandlerResult,
  type InterruptState,
  isNamedHandler,
  type NamedHandler,
  RunAbortedError,
  textOf,
} from "./handlers/handler-api.ts";
export { llmHandler } from "./handlers/llm.ts";
export {
  type ChatMessage,
  type ChatReply,
  type ChatRequest,
  type ChatTool,
  type ChatToolCall,
  type LlmClient,
  LlmRequestError,
  OpenAiCompatibleClient,
} from "./handlers/llm-client.ts";
export {
  type ProfileTools,
  type Tool,
  type ToolContext,
  ToolNotAllowedError,
  ToolRegistry,
  UnknownToolError,
} from "./handlers/tools.ts";
export { Workspace, WorkspaceEscapeError } from "./handlers/workspace.ts";
export { heartbeatTtlSeconds, type WorkerMode } from "./heartbeat.ts";
export { CONTENT_CHECK_FAILED, ContentCheckFailure, judgeOutput, profileGuardrails } from "./output-check.ts";
export { type RestartDecision, RestartPolicy } from "./restart-policy.ts";
export { DEAD_LETTER_RETENTION_SECONDS, type RetentionReport } from "./retention.ts";
export { GENERIC_FAILURE, timeLimitFailure } from "./run-executor.ts";
export { LeaseLostError, OutputLimitError, outputLimitFailure, RunWriter } from "./run-writer.ts";
export { liveWorkers, readStatus, type StatusReport, statusExitCode, type WorkerStatus } from "./status.ts";
export { formatStatus } from "./status-format.ts";
export { type ActorStart, runSupervisor, type SupervisorOptions } from "./supervisor.ts";
export { runSweep, type SweepOptions, type SweepTick } from "./sweep.ts";
export { RUNTIME_VERSION } from "./version.ts";
