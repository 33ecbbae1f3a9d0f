// Runs an @a2a-js/sdk AgentExecutor as a handler: the run leg becomes the executor's RequestContext, and what it
// publishes on its event bus becomes the leg's output (status notes, artifacts and their chunks, the closing state);
// the run's abort (cancel, drain, lost lease, time limit) calls its cancelTask. The executor's code is not changed.
import { Artifact as SdkArtifact, Message as SdkMessage, SendMessageRequest, Task, taskStateToJSON } from "@a2a-js/sdk";
import {
  type AgentExecutionEvent,
  type AgentExecutor,
  DefaultExecutionEventBus,
  RequestContext,
  ServerCallContext,
  UnauthenticatedUser,
  type User,
} from "@a2a-js/sdk/server";
import { defineHandler, type HandlerContext, HandlerFailure, type NamedHandler } from "../actors/index.ts";
import type { Artifact, Message } from "../protocol/index.ts";

export interface ExecutorHandlerOptions {
  /** The user the executor's ServerCallContext names; default an unauthenticated user. */
  readonly user?: User;
}

/** What a leg's events decided: how it ends. */
type Outcome =
  | { kind: "completed" }
  | { kind: "interrupted"; state: "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED"; message: string }
  | { kind: "failed"; message: string };

const INPUT_QUESTION = "The agent needs more input to continue.";
const AUTH_QUESTION = "The agent needs authorization to continue.";
const FAILED = "The agent could not complete the task.";

type SdkTaskStatus = NonNullable<Task["status"]>;

function sdkText(message: SdkMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");
}

function toWireArtifact(artifact: SdkArtifact): Artifact {
  return SdkArtifact.toJSON(artifact) as Artifact;
}

function toSdkMessage(message: Message, taskId: string, contextId: string): SdkMessage {
  return SdkMessage.fromJSON({ ...message, taskId, contextId });
}

/**
 * The RequestContext the SDK's DefaultRequestHandler would build: the latest user message with the task's ids and,
 * on a follow-up (the task asked a question and the client answered), the task as it stood with that answer appended.
 */
function requestContextOf(ctx: HandlerContext, user: User): RequestContext {
  const { taskId, contextId } = ctx;
  const history = ctx.messages.map((message) => toSdkMessage(message, taskId, contextId));
  const input = ctx.input ? toSdkMessage(ctx.input, taskId, contextId) : undefined;
  const request = SendMessageRequest.fromJSON({ message: input ? SdkMessage.toJSON(input) : undefined });
  const followUp = ctx.messages.some((message) => message.role === "ROLE_AGENT");
  const task = followUp
    ? Task.fromJSON({ id: taskId, contextId, status: { state: "TASK_STATE_INPUT_REQUIRED" } })
    : undefined;
  if (task) task.history = history;
  const call = new ServerCallContext({ user, requestedVersion: "1.0" });
  return new RequestContext(request, taskId, contextId, call, task);
}

/** Maps one leg's events onto the handler context, in publication order (each emit waits for the one before). */
class EventMapper {
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;
  outcome: Outcome | undefined;
  private settle: () => void = () => {};
  /** Resolves when an event decided how the leg ends. */
  readonly settled = new Promise<void>((resolve) => {
    this.settle = resolve;
  });

  constructor(private readonly ctx: HandlerContext) {}

  readonly onEvent = (event: AgentExecutionEvent): void => {
    if (this.outcome) return; // the leg's end is decided; later events have nowhere to go
    switch (event.kind) {
      case "task":
        // The snapshot that opens a turn. Only its artifacts and a terminal state are news: its history is ours.
        for (const artifact of event.data.artifacts) this.emit(() => this.ctx.emit.artifact(toWireArtifact(artifact)));
        if (event.data.status && isTerminal(event.data.status)) this.status(event.data.status);
        return;
      case "message":
        // A direct reply: its text is the answer, and the leg is complete.
        this.reply(event.data);
        this.end({ kind: "completed" });
        return;
      case "statusUpdate":
        if (event.data.status) this.status(event.data.status);
        return;
      case "artifactUpdate": {
        const { artifact, append, lastChunk } = event.data;
        if (artifact) this.emit(() => this.ctx.emit.artifact(toWireArtifact(artifact), { append, lastChunk }));
        return;
      }
    }
  };

  /** Waits for every emit so far; rethrows the first that failed (a lost lease, a cancel). */
  async drained(): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure;
  }

  private status(status: SdkTaskStatus): void {
    const text = sdkText(status.message);
    switch (taskStateToJSON(status.state)) {
      case "TASK_STATE_WORKING":
        if (text !== "") this.emit(() => this.ctx.emit.progress(text));
        return;
      case "TASK_STATE_INPUT_REQUIRED":
        this.end({ kind: "interrupted", state: "TASK_STATE_INPUT_REQUIRED", message: text || INPUT_QUESTION });
        return;
      case "TASK_STATE_AUTH_REQUIRED":
        this.end({ kind: "interrupted", state: "TASK_STATE_AUTH_REQUIRED", message: text || AUTH_QUESTION });
        return;
      case "TASK_STATE_COMPLETED":
        // A2A lets the closing status carry the answer; a handler's answer is its output, so it becomes text.
        if (status.message) this.reply(status.message);
        this.end({ kind: "completed" });
        return;
      case "TASK_STATE_FAILED":
      case "TASK_STATE_REJECTED":
        this.end({ kind: "failed", message: text || FAILED });
        return;
      case "TASK_STATE_CANCELED":
        // The executor's answer to cancelTask; the runtime has already ended the task. Unasked, it is a failure.
        this.end({ kind: "failed", message: text || "The agent canceled the task." });
        return;
      default:
        return; // SUBMITTED, UNSPECIFIED: nothing to show
    }
  }

  private reply(message: SdkMessage): void {
    const text = sdkText(message);
    const others = message.parts.filter((part) => part.content?.$case !== "text");
    if (text !== "") this.emit(() => this.ctx.emit.text(text));
    if (others.length > 0) {
      const artifact = SdkArtifact.fromJSON({ artifactId: message.messageId, name: "message" });
      artifact.parts = others;
      this.emit(() => this.ctx.emit.artifact(toWireArtifact(artifact)));
    }
  }

  private end(outcome: Outcome): void {
    this.outcome = outcome;
    this.settle();
  }

  private emit(write: () => Promise<void>): void {
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) return;
      try {
        await write();
      } catch (error) {
        this.failure = error;
        this.settle();
      }
    });
  }
}

function isTerminal(status: SdkTaskStatus): boolean {
  const state = taskStateToJSON(status.state);
  return ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"].includes(state);
}

/**
 * A handler named `name` that runs `executor` for each leg of a run. The leg ends when the executor publishes a
 * closing state (COMPLETED, INPUT_REQUIRED, AUTH_REQUIRED, FAILED, REJECTED) or a Message, or when `execute` returns
 * (then it completes); events published after that are not written. An error thrown by `execute` fails the task with
 * the generic reason (its message stays in the worker's log).
 */
export function fromAgentExecutor(
  name: string,
  executor: AgentExecutor,
  options: ExecutorHandlerOptions = {},
): NamedHandler {
  const user = options.user ?? new UnauthenticatedUser();
  return defineHandler(name, async (ctx) => {
    const requestContext = requestContextOf(ctx, user);
    const bus = new DefaultExecutionEventBus();
    const mapper = new EventMapper(ctx);
    bus.on("event", mapper.onEvent);
    ctx.signal.throwIfAborted();
    let aborted: () => void = () => {};
    // The leg ends on an abort even when the executor ignores its cancelTask: the runtime has ended the task.
    const abort = new Promise<void>((resolve) => {
      aborted = resolve;
    });
    const cancel = () => {
      aborted();
      executor.cancelTask(ctx.taskId, bus).catch(() => {});
    };
    ctx.signal.addEventListener("abort", cancel, { once: true });
    let thrown: { error: unknown } | undefined;
    const executing = Promise.resolve()
      .then(() => executor.execute(requestContext, bus))
      .catch((error: unknown) => {
        thrown = { error };
      });
    try {
      await Promise.race([executing, mapper.settled, abort]);
      ctx.signal.throwIfAborted();
      await mapper.drained();
    } finally {
      ctx.signal.removeEventListener("abort", cancel);
      bus.off("event", mapper.onEvent);
      void executing.finally(() => bus.finished());
    }
    const outcome = mapper.outcome;
    if (!outcome && thrown) throw thrown.error;
    if (!outcome || outcome.kind === "completed") return undefined;
    if (outcome.kind === "failed") throw new HandlerFailure(outcome.message);
    return { state: outcome.state, message: outcome.message };
  });
}
