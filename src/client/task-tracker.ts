// Follows one task through stream events: a `task` snapshot replaces what is known, a `statusUpdate` sets the status,
// an `artifactUpdate` adds an artifact or (append: true) adds its parts to the one with the same artifactId.
import {
  type Artifact,
  isInterrupted,
  isTerminal,
  type Message,
  type StreamResponse,
  type Task,
  type TaskState,
} from "../protocol/index.ts";

export class TaskTracker {
  private current: Task | undefined;
  private reply: Message | undefined;

  /** The task as the events so far describe it; undefined before the first task event. */
  get task(): Task | undefined {
    return this.current;
  }

  /** The agent's message when it answered with a message instead of a task. */
  get message(): Message | undefined {
    return this.reply;
  }

  get state(): TaskState | undefined {
    return this.current?.status.state;
  }

  /** Terminal, interrupted, or answered with a message: nothing more will come on this task's stream. */
  get settled(): boolean {
    if (this.reply !== undefined) return true;
    const state = this.state;
    return state !== undefined && (isTerminal(state) || isInterrupted(state));
  }

  apply(event: StreamResponse): void {
    if (event.task !== undefined) {
      this.current = structuredClone(event.task);
    } else if (event.message !== undefined) {
      this.reply = event.message;
    } else if (event.statusUpdate !== undefined) {
      const { taskId, contextId, status } = event.statusUpdate;
      this.current = { ...(this.current ?? { id: taskId, contextId }), status };
    } else if (event.artifactUpdate !== undefined) {
      const { taskId, contextId, artifact, append } = event.artifactUpdate;
      const task = this.current ?? { id: taskId, contextId, status: { state: "TASK_STATE_WORKING" } };
      task.artifacts = merge(task.artifacts ?? [], artifact, append === true);
      this.current = task;
    }
  }
}

function merge(artifacts: readonly Artifact[], update: Artifact, append: boolean): Artifact[] {
  const index = artifacts.findIndex((artifact) => artifact.artifactId === update.artifactId);
  const known = artifacts[index];
  if (index === -1 || known === undefined) return [...artifacts, structuredClone(update)];
  const merged: Artifact = append ? { ...known, parts: [...known.parts, ...update.parts] } : structuredClone(update);
  return artifacts.map((artifact, i) => (i === index ? merged : artifact));
}
