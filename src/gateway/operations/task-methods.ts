// GetTask and CancelTask: one task of the caller in this profile; another client's task is exactly a missing one.

import { toTask } from "../../journal/index.ts";
import { isTerminal, type Task, TaskNotFoundError, TERMINAL_STATES } from "../../protocol/index.ts";
import type { OperationCall } from "./operation-call.ts";

/** How long CancelTask waits for a running task's actor to end it, in ms. */
export const CANCEL_WAIT_MS = 2000;

export async function getTask(call: OperationCall<"GetTask">): Promise<Task> {
  const { context, client, profile, params } = call;
  const snapshot = await context.journal.snapshot(client.id, params.id, profile.profile.name);
  if (!snapshot) throw new TaskNotFoundError(params.id);
  return toTask(snapshot.record, { historyLength: params.historyLength });
}

/**
 * Cancels a queued or interrupted task at once; a running one is asked to stop and awaited for up to CANCEL_WAIT_MS.
 * Either way the answer is the task as it is then. A canceled task is returned as is (cancel is idempotent).
 */
export async function cancelTask(call: OperationCall<"CancelTask">): Promise<Task> {
  const { context, client, params } = call;
  const profile = call.profile.profile;
  const { canceledNow } = await context.journal.cancel(client.id, params.id, profile.name, {
    retentionSeconds: profile.retentionSeconds,
    journalRetentionSeconds: profile.journalRetentionSeconds,
  });
  if (!canceledNow) {
    const outcome = await context.tail.waitUntil(client.id, params.id, (record) => isTerminal(record.state), {
      timeoutMs: CANCEL_WAIT_MS,
      signal: call.signal,
      states: new Set(TERMINAL_STATES),
    });
    if (outcome.kind === "met") return toTask(outcome.snapshot.record);
  }
  const snapshot = await context.journal.snapshot(client.id, params.id, profile.name);
  if (!snapshot) throw new TaskNotFoundError(params.id);
  return toTask(snapshot.record);
}
