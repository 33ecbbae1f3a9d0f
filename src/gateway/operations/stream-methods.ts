// SendStreamingMessage and SubscribeToTask. Everything found before the first event (streaming switched off, a missing,
// foreign or terminal task, a stream limit) is thrown before the stream opens; the stream leases are taken before anything is
// stored, so a refusal over a stream limit stores no task.
import { isTerminal, TaskNotFoundError, UnsupportedOperationError } from "../../protocol/index.ts";
import { type TaskStreamSource, taskStreamSource } from "../task-stream.ts";
import { type OperationCall, stopIfTimedOut } from "./operation-call.ts";
import { messageInput, store } from "./send-message.ts";

/** A profile with `streaming: false` answers -32004 to both streaming methods, as its card says. */
function requireStreaming(call: OperationCall<"SendStreamingMessage" | "SubscribeToTask">): void {
  if (!call.profile.profile.streaming) {
    throw new UnsupportedOperationError("Streaming is not offered by this agent (capabilities.streaming is false)");
  }
}

/** Accepts (or resumes) exactly as SendMessage does, then streams the task; `returnImmediately` has no effect. */
export async function sendStreamingMessage(call: OperationCall<"SendStreamingMessage">): Promise<TaskStreamSource> {
  requireStreaming(call);
  const { context, client } = call;
  const profile = call.profile.profile;
  const { input, view } = messageInput(call);
  const named = input.message.taskId;
  // A follow-up names its task: a missing or foreign one is refused before any lease is taken on it.
  if (named !== undefined && !(await context.journal.snapshot(client.id, named, profile.name))) {
    throw new TaskNotFoundError(named);
  }
  const lease = await context.streamLeases.acquire(call.requestId, client.id, named);
  try {
    stopIfTimedOut(call);
    const accepted = await store(call, input);
    // A task this request created has no other stream: its per-task lease cannot be refused.
    if (lease.taskId === undefined) await context.streamLeases.attachTask(lease, accepted.taskId, !accepted.created);
    const snapshot = await context.journal.snapshot(client.id, accepted.taskId, profile.name);
    if (!snapshot) throw new TaskNotFoundError(accepted.taskId);
    return taskStreamSource(context, { clientId: client.id, snapshot, view, lease, sentMessage: true });
  } catch (error) {
    await context.streamLeases.release(lease);
    throw error;
  }
}

/** Streams a task's snapshot and then its newer events; a terminal task is -32004 (fetch it with GetTask). */
export async function subscribeToTask(call: OperationCall<"SubscribeToTask">): Promise<TaskStreamSource> {
  requireStreaming(call);
  const { context, client, params } = call;
  const snapshot = await context.journal.snapshot(client.id, params.id, call.profile.profile.name);
  if (!snapshot) throw new TaskNotFoundError(params.id);
  if (isTerminal(snapshot.record.state)) {
    throw new UnsupportedOperationError("The task is in a terminal state and has nothing more to stream; use GetTask", {
      taskId: params.id,
    });
  }
  const lease = await context.streamLeases.acquire(call.requestId, client.id, params.id);
  return taskStreamSource(context, {
    clientId: client.id,
    snapshot,
    view: {},
    lease,
  });
}
