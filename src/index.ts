// The package's main entry (`import { defineHandler } from "a2a-runtime"`): what an agent author writes a handler
// against. A handler module exports defineHandler() values; workers load it with --handlers or the config's handlers.

export {
  type AbortReason,
  type ChatMessage,
  type ChatReply,
  type ChatRequest,
  type ChatTool,
  type ChatToolCall,
  defineHandler,
  type Emit,
  type Handler,
  type HandlerContext,
  HandlerFailure,
  type HandlerResult,
  type InterruptState,
  type LlmClient,
  type NamedHandler,
  OutputLimitError,
  type ProfileTools,
  RunAbortedError,
  type Tool,
  type ToolContext,
  ToolNotAllowedError,
  textOf,
  type Workspace,
  WorkspaceEscapeError,
} from "./actors/index.ts";
export type { Profile } from "./config/index.ts";
export type { Artifact, Message, Part } from "./protocol/index.ts";
