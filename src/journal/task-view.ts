// Decodes a stored task hash into the A2A Task a client sees, with historyLength and includeArtifacts applied.
// The hash keeps JSON strings for status, history and artifacts, so this is the only place that parses them.
import type { Artifact, Message, Task, TaskState, TaskStatus } from "../protocol/index.ts";

/** A task as stored, with its bookkeeping beside the A2A view. */
export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  readonly clientId: string;
  readonly profile: string;
  readonly runId: string;
  readonly state: TaskState;
  readonly rev: number;
  /** Status timestamp (ms), the ListTasks sort key. */
  readonly timestampMs: number;
  readonly status: TaskStatus;
  readonly history: Message[];
  readonly artifacts: Artifact[];
  readonly metadata: Record<string, unknown> | undefined;
}

/** Reads a flat HGETALL reply (`[field, value, field, value, …]`) or an object into a record. */
export function decodeTaskFields(fields: readonly string[] | Record<string, string>): TaskRecord {
  let map: Record<string, string>;
  if (Array.isArray(fields)) {
    map = {};
    for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i] as string] = fields[i + 1] as string;
  } else {
    map = fields as Record<string, string>;
  }
  return {
    id: map.id ?? "",
    contextId: map.ctx ?? "",
    clientId: map.cli ?? "",
    profile: map.prof ?? "",
    runId: map.run ?? "",
    state: (map.state ?? "TASK_STATE_SUBMITTED") as TaskState,
    rev: Number(map.rev ?? 0),
    timestampMs: Number(map.ts ?? 0),
    status: JSON.parse(map.st ?? "{}") as TaskStatus,
    history: JSON.parse(map.hist ?? "[]") as Message[],
    artifacts: JSON.parse(map.arts ?? "[]") as Artifact[],
    metadata: map.meta ? (JSON.parse(map.meta) as Record<string, unknown>) : undefined,
  };
}

export interface TaskViewOptions {
  /** Unset: all history; 0: none (the key is omitted); N: the N most recent messages. */
  historyLength?: number | undefined;
  /** false omits the `artifacts` key entirely (ListTasks' default). */
  includeArtifacts?: boolean | undefined;
}

/** The A2A Task a client sees. Empty lists are omitted, as ProtoJSON omits default values. */
export function toTask(record: TaskRecord, options: TaskViewOptions = {}): Task {
  const task: Task = { id: record.id, contextId: record.contextId, status: record.status };
  if (options.includeArtifacts !== false && record.artifacts.length > 0) task.artifacts = record.artifacts;
  const limit = options.historyLength;
  if (limit !== 0 && record.history.length > 0) {
    task.history = limit === undefined ? record.history : record.history.slice(-limit);
  }
  if (record.metadata) task.metadata = record.metadata;
  return task;
}
