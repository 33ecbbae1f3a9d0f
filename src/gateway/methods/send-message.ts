// SendMessage: accepts a new task or resumes an interrupted one (one atomic script each), then answers at once
// (returnImmediately) or waits, holding an installation-wide waiting lease, until the task is terminal or interrupted.
import {
  type AcceptInput,
  BlockingDeadlineExceededError,
  CapacityError,
  InvalidParamsError,
  isInterrupted,
  isTerminal,
  PushNotificationNotSupportedError,
  REFUSAL_REASONS,
  storeFailure,
  TaskNotFoundError,
  type TaskRecord,
  toTask,
  UnsupportedOperationError,
} from "../../journal/index.ts";
import type { SendMessageResponse } from "../schema/index.ts";
import { checkIncomingMessage } from "./message-checks.ts";
import type { MethodCall } from "./method-call.ts";

/** A blocking SendMessage answers at these states. */
function settled(record: TaskRecord): boolean {
  return isTerminal(record.state) || isInterrupted(record.state);
}

/** Runs the accept script, or the resume script for a follow-up to an existing task; returns the task id. */
async function store(call: MethodCall<"SendMessage">, input: AcceptInput): Promise<string> {
  const { journal } = call.context;
  const taskId = input.message.taskId;
  if (taskId === undefined) return (await journal.accept(input)).taskId;
  const current = await journal.snapshot(input.clientId, taskId, input.profile);
  if (!current) throw new TaskNotFoundError(taskId);
  const contextId = input.message.contextId;
  if (contextId !== undefined && contextId !== current.record.contextId) {
    throw new InvalidParamsError("message.contextId is not the context of the task", [
      { field: "message.contextId", description: "does not match the contextId of message.taskId" },
    ]);
  }
  if (isTerminal(current.record.state)) {
    throw new UnsupportedOperationError("The task is in a terminal state and accepts no further messages", { taskId });
  }
  return (await journal.resume({ ...input, taskId })).taskId;
}

export async function sendMessage(call: MethodCall<"SendMessage">): Promise<SendMessageResponse> {
  const { context, client, profile: runtime, params } = call;
  const { journal, waiting, tail, config } = context;
  const profile = runtime.profile;
  const message = checkIncomingMessage(params.message, runtime);
  const configuration = params.configuration;
  // Push notifications are not offered yet (the card says so): an inline config cannot be honoured.
  if (configuration?.taskPushNotificationConfig !== undefined) throw new PushNotificationNotSupportedError();
  const view = { historyLength: configuration?.historyLength };
  const input: AcceptInput = {
    clientId: client.id,
    profile: profile.name,
    profileQuota: profile.quota.maxActiveTasks,
    message,
    metadata: params.metadata,
  };

  if (configuration?.returnImmediately === true) {
    const taskId = await store(call, input);
    const snapshot = await journal.snapshot(client.id, taskId, profile.name);
    if (!snapshot) throw new TaskNotFoundError(taskId);
    return { task: toTask(snapshot.record, view) };
  }

  const leased = await waiting.acquire(call.requestId).catch(storeFailure);
  if (!leased) {
    const max = config.server.maxWaitingRequests;
    throw new CapacityError(
      REFUSAL_REASONS.waitingRequests,
      `${max} blocking requests are waiting already; retry, or send returnImmediately: true and poll`,
      context.retryAfterSeconds,
      { limit: String(max) },
    );
  }
  try {
    const taskId = await store(call, input);
    const seconds = config.server.blockingWaitSeconds;
    const timeoutMs = seconds * 1000 - (performance.now() - call.startedAt);
    const outcome = await tail.waitUntil(client.id, taskId, settled, { timeoutMs, signal: call.signal });
    if (outcome.kind === "met") return { task: toTask(outcome.snapshot.record, view) };
    if (outcome.kind === "gone") throw new TaskNotFoundError(taskId);
    throw new BlockingDeadlineExceededError(taskId, seconds);
  } finally {
    await waiting.release(call.requestId);
  }
}
