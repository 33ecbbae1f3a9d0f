// The typed API an agent author writes a domain handler against: the context a run gets, the result it returns, and
// the registry that binds a handler to the name a profile gives. No Redis here: actors wire the context to the journal.
import type { Tracer } from "@opentelemetry/api";
import type { Profile } from "../../config/index.ts";
import type { Artifact, Message } from "../../protocol/index.ts";
import type { LlmClient } from "./llm-client.ts";
import type { ProfileTools } from "./tools.ts";
import type { Workspace } from "./workspace.ts";

/**
 * Output of a run. Every call goes through the run's output gate, in call order; await it to see a lost lease, an
 * aborted run, or text past the profile's guardrails.maxLength (each rejects; one not awaited is ignored).
 */
export interface Emit {
  /** A text delta of this leg's answer (one artifact per leg; chunks are appended). */
  text(delta: string): Promise<void>;
  /**
   * A whole artifact; one with the same artifactId as an earlier one replaces it. With `{ append: true }` its parts
   * are added to the artifact of that id instead (a chunk of a streamed artifact; `lastChunk` marks the end).
   */
  artifact(artifact: Artifact, chunk?: ArtifactChunk): Promise<void>;
  /** A progress note: a WORKING status update carrying `message` as an agent message. */
  progress(message: string, metadata?: Record<string, unknown>): Promise<void>;
}

/** How an artifact event relates to earlier ones of the same artifactId (A2A's append and lastChunk). */
export interface ArtifactChunk {
  /** Add the parts to the artifact emitted earlier with this id (default false: replace it). */
  readonly append?: boolean | undefined;
  /** This is the artifact's last chunk (default true). */
  readonly lastChunk?: boolean | undefined;
}

export type InterruptState = "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED";

/** How a leg ends. Returning nothing means COMPLETED. */
export type HandlerResult =
  | { state: "TASK_STATE_COMPLETED" }
  | {
      state: InterruptState /** The agent's question, shown to the client and kept in the history. */;
      message: string;
    };

export interface HandlerContext {
  readonly taskId: string;
  readonly contextId: string;
  /** The task history, oldest first: user messages and the agent's earlier questions. */
  readonly messages: readonly Message[];
  /** The latest user message (after a resume: the client's follow-up). */
  readonly input: Message | undefined;
  /**
   * Fires on cancel, on a lost lease, when the worker drains and when the leg exceeds the profile's
   * runTimeoutSeconds; `signal.reason` is a RunAbortedError.
   */
  readonly signal: AbortSignal;
  readonly emit: Emit;
  /** Ends this leg in INPUT_REQUIRED once the handler returns; the client's next message resumes the same run. */
  requireInput(message: string): HandlerResult;
  /** Ends this leg in AUTH_REQUIRED once the handler returns. */
  requireAuth(message: string): HandlerResult;
  /** The profile's OpenAI-compatible client; undefined when the profile configures no `llm`. */
  readonly llm: LlmClient | undefined;
  /** The tools of the profile's allow-list; calling any other throws ToolNotAllowedError (and records the refusal). */
  readonly tools: ProfileTools;
  /** The profile's pinned workspace; undefined when it has none. */
  readonly workspace: Workspace | undefined;
  /** The execution identity the run acts as. */
  readonly identity: string;
  /** The resources the profile allows. */
  readonly resources: readonly string[];
  readonly profile: Profile;
  /** 1 for the first execution of this leg; higher after a crash or a lost lease. */
  readonly attempt: number;
  /**
   * An OpenTelemetry tracer for the handler's own spans. They nest under the leg's span (`invoke_agent <profile>`),
   * in the trace of the request that sent the task; with tracing off it is the API's no-op tracer.
   */
  readonly tracer: Tracer;
}

/** A domain handler; `async (ctx) => { ... }` without a return value completes the task. */
// biome-ignore lint/suspicious/noConfusingVoidType: handlers written as `async () => {}` return Promise<void>
export type Handler = (ctx: HandlerContext) => Promise<HandlerResult | undefined | void>;

const NAMED = Symbol.for("a2a-runtime.handler");

export interface NamedHandler {
  readonly name: string;
  readonly run: Handler;
  readonly [NAMED]: true;
}

/** A handler with the name profiles use for it; a module loaded with `--handlers` exports these. */
export function defineHandler(name: string, run: Handler): NamedHandler {
  return Object.freeze({ name, run, [NAMED]: true as const });
}

export function isNamedHandler(value: unknown): value is NamedHandler {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[NAMED] === true;
}

/** Thrown by a handler when the failure's message may be shown to the client (any other error stays in the log). */
export class HandlerFailure extends Error {
  override readonly name = "HandlerFailure";
}

/** Why a run's signal fired. */
export type AbortReason = "cancel" | "lost" | "drain" | "timeout" | "output";

export class RunAbortedError extends Error {
  override readonly name = "RunAbortedError";
  constructor(readonly reason: AbortReason) {
    super(`run aborted (${reason})`);
  }
}

export class HandlerRegistry {
  private readonly handlers = new Map<string, Handler>();

  /** Registers a handler under a name (a later registration replaces an earlier one). */
  register(name: string, handler: Handler): this;
  register(handler: NamedHandler): this;
  register(nameOrHandler: string | NamedHandler, handler?: Handler): this {
    if (typeof nameOrHandler === "string") {
      if (!handler) throw new TypeError(`handler ${nameOrHandler}: no function given`);
      this.handlers.set(nameOrHandler, handler);
    } else this.handlers.set(nameOrHandler.name, nameOrHandler.run);
    return this;
  }

  get(name: string): Handler | undefined {
    return this.handlers.get(name);
  }

  names(): string[] {
    return [...this.handlers.keys()].sort();
  }
}

/** The text of a message's text parts, joined. */
export function textOf(message: Message | undefined): string {
  if (!message) return "";
  return message.parts.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join("");
}
