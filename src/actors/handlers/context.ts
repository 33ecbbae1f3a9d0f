// Builds the HandlerContext of one run leg from what the actor holds: the task record, the output sink, the abort
// signal and the profile's LLM client, tools and workspace. Emits after an abort are refused here.
import type { Profile } from "../../config/index.ts";
import { profileIdentity } from "../../config/index.ts";
import type { Message } from "../../protocol/index.ts";
import { runtimeTracer } from "../../tracing/index.ts";
import type { OutputSink } from "../emit-gate.ts";
import type { Emit, HandlerContext, HandlerResult } from "./handler-api.ts";
import type { LlmClient } from "./llm-client.ts";
import { profileTools, type ToolRegistry } from "./tools.ts";
import type { Workspace } from "./workspace.ts";

export interface HandlerContextInput {
  taskId: string;
  contextId: string;
  history: readonly Message[];
  profile: Profile;
  attempt: number;
  signal: AbortSignal;
  sink: OutputSink;
  llm: LlmClient | undefined;
  tools: ToolRegistry;
  workspace: Workspace | undefined;
  /** Records a refused tool call in the task (a status message, kept in the history). */
  recordRefusal: (tool: string) => Promise<void>;
}

export interface BuiltContext {
  ctx: HandlerContext;
  /** The interrupt the handler asked for with requireInput/requireAuth, if any. */
  requested(): HandlerResult | undefined;
}

export function createHandlerContext(input: HandlerContextInput): BuiltContext {
  const { signal, sink, profile } = input;
  let requested: HandlerResult | undefined;
  const guard = (write: () => Promise<void>): Promise<void> => {
    const written = signal.aborted ? Promise.reject(signal.reason) : write();
    // A handler that does not await an emit must not end its actor (and every run it holds) with an unhandled
    // rejection: the refusal still reaches a handler that awaits, and the run learns of it through its signal or end.
    written.catch(() => {});
    return written;
  };
  const emit: Emit = {
    text: (delta) => guard(() => sink.text(delta)),
    artifact: (artifact, chunk) => guard(() => sink.artifact(artifact, chunk)),
    progress: (message, metadata) => guard(() => sink.progress(message, metadata)),
  };
  const identity = profileIdentity(profile);
  const tools = profileTools(
    input.tools,
    profile.tools,
    { identity, workspace: input.workspace, resources: profile.resources, signal },
    input.recordRefusal,
  );
  const ctx: HandlerContext = {
    taskId: input.taskId,
    contextId: input.contextId,
    messages: input.history,
    input: [...input.history].reverse().find((message) => message.role === "ROLE_USER"),
    signal,
    emit,
    requireInput(message) {
      requested = { state: "TASK_STATE_INPUT_REQUIRED", message };
      return requested;
    },
    requireAuth(message) {
      requested = { state: "TASK_STATE_AUTH_REQUIRED", message };
      return requested;
    },
    llm: input.llm,
    tools,
    workspace: input.workspace,
    identity,
    resources: profile.resources,
    profile,
    attempt: input.attempt,
    tracer: runtimeTracer(),
  };
  return { ctx, requested: () => requested };
}
