// Decodes a stored task hash into the A2A Task a client sees, with historyLength and includeArtifacts applied.
// The hash keeps JSON strings for status, history and artifacts, so this is the only place that parses them; the
// artifact events streamed since the list was last compacted (the task's chunk store) are applied here too.
import type { Artifact, Message, StreamResponse, Task, TaskState, TaskStatus } from "../protocol/index.ts";

/** A task as stored, with its bookkeeping beside the A2A view. */
export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  readonly clientId: string;
  readonly profile: string;
  readonly state: TaskState;
  readonly rev: number;
  /** Status timestamp (ms), the ListTasks sort key. */
  readonly timestampMs: number;
  readonly status: TaskStatus;
  readonly history: Message[];
  readonly artifacts: Artifact[];
  readonly metadata: Record<string, unknown> | undefined;
}

/**
 * `earlier` with the parts of `added` appended, as A2A's append does (a text part joined to a text part that ends
 * them). The first append to an artifact copies it and records the copy in `own`; later appends to that copy extend
 * its parts in place, so streaming an artifact in many chunks costs the chunks' size, not its square. An artifact in
 * `own` must have no holder but the caller's.
 */
export function appendArtifact(earlier: Artifact, added: Artifact, own: WeakSet<Artifact>): Artifact {
  let target = earlier;
  if (!own.has(target)) {
    target = { ...earlier, parts: [...earlier.parts] };
    own.add(target);
  }
  const parts = target.parts;
  for (const part of added.parts) {
    const last = parts[parts.length - 1];
    if (last && "text" in last && "text" in part && typeof last.text === "string" && typeof part.text === "string") {
      parts[parts.length - 1] = { ...last, text: last.text + part.text };
    } else parts.push(part);
  }
  return target;
}

/**
 * An artifact list built by artifact events as a client applies them: a new artifactId is added, an equal one
 * replaced, or, with `append`, its parts added (see appendArtifact). Each event costs the size of its own parts:
 * neither the callers' artifacts nor the list is copied again (copying on each event grew with the square of an
 * artifact's chunks, e.g. a table streamed as data parts).
 */
export class ArtifactList {
  /** The list, in first-emitted order; it changes with every apply(). */
  readonly items: Artifact[] = [];
  private readonly positions = new Map<string, number>();
  /** Artifacts (in items) whose parts array this list made, and may extend. */
  private readonly own = new WeakSet<Artifact>();

  constructor(initial: readonly Artifact[] = []) {
    for (const artifact of initial) {
      if (!this.positions.has(artifact.artifactId)) this.positions.set(artifact.artifactId, this.items.length);
      this.items.push(artifact);
    }
  }

  apply(artifact: Artifact, append: boolean): void {
    const at = this.positions.get(artifact.artifactId);
    const existing = at === undefined ? undefined : this.items[at];
    if (at === undefined || !existing) {
      this.positions.set(artifact.artifactId, this.items.length);
      this.items.push(artifact);
      return;
    }
    if (!append) {
      this.items[at] = artifact;
      return;
    }
    this.items[at] = appendArtifact(existing, artifact, this.own);
  }
}

/** One artifact event applied to a copy of `list` (see ArtifactList; several events: use one ArtifactList). */
export function applyArtifact(list: readonly Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const applied = new ArtifactList(list);
  applied.apply(artifact, append);
  return applied.items;
}

/**
 * The artifact list of a task: its compacted `arts` JSON with the events of its chunk store applied in order (the
 * store holds `,`-prefixed StreamResponse JSON, see KeySpace.artifactChunks). O(stored bytes).
 */
export function assembleArtifacts(arts: string | undefined, chunks: string | null | undefined): Artifact[] {
  const list = JSON.parse(arts ?? "[]") as Artifact[];
  if (!chunks) return list;
  const events = JSON.parse(`[${chunks.slice(1)}]`) as StreamResponse[];
  const built = new ArtifactList(list);
  for (const event of events) {
    const update = event.artifactUpdate;
    if (update) built.apply(update.artifact, update.append === true);
  }
  return built.items;
}

/** A task hash as a script returned it (HGETALL, flat) with its chunk store: decoded by decodeTaskFields. */
export interface StoredTask {
  readonly fields: readonly string[];
  readonly chunks: string | undefined;
}

/**
 * Reads a flat HGETALL reply (`[field, value, field, value, …]`) or an object into the record of task `id` (the hash
 * does not repeat its key's id); `chunks` is the task's chunk store (GET of KeySpace.artifactChunks; null or absent
 * when it has none).
 */
export function decodeTaskFields(
  id: string,
  fields: readonly string[] | Record<string, string>,
  chunks?: string | null,
): TaskRecord {
  let map: Record<string, string>;
  if (Array.isArray(fields)) {
    map = {};
    for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i] as string] = fields[i + 1] as string;
  } else {
    map = fields as Record<string, string>;
  }
  return {
    id,
    contextId: map.ctx ?? "",
    clientId: map.cli ?? "",
    profile: map.prof ?? "",
    state: (map.state ?? "TASK_STATE_SUBMITTED") as TaskState,
    rev: Number(map.rev ?? 0),
    timestampMs: Number(map.ts ?? 0),
    status: JSON.parse(map.st ?? "{}") as TaskStatus,
    history: JSON.parse(map.hist ?? "[]") as Message[],
    artifacts: assembleArtifacts(map.arts, chunks),
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
