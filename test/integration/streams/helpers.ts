// Stream test helpers on top of the gateway harness: an actor's artifact chunks written the way a real actor writes
// them (append/lastChunk, the stored artifact grown to match), the journal as XRANGE shows it, and the stream leases.

import type { Claim } from "../../../src/journal/index.ts";
import { parseJournalEntry } from "../../../src/journal/index.ts";
import type { Artifact, StreamResponse } from "../../../src/protocol/index.ts";
import type { Harness } from "../gateway/harness.ts";

export interface ChunkOptions {
  artifactId?: string;
  /** The text of chunk i (0-based). */
  text?: (index: number) => string;
  /** Waits this long between chunks, in ms. */
  gapMs?: number;
  /** Called after each chunk is written. */
  after?: (index: number) => void | Promise<void>;
}

/** Writes `count` artifact chunks (the first starts the artifact, the rest append, the last is lastChunk). */
export async function emitChunks(h: Harness, claim: Claim, count: number, options: ChunkOptions = {}): Promise<string> {
  const artifactId = options.artifactId ?? "answer";
  const text = options.text ?? ((index: number) => `chunk ${index};`);
  const contextId = (await h.redis.hget(h.keys.task(0, claim.taskId), "ctx")) ?? "";
  const stored = JSON.parse((await h.redis.hget(h.keys.task(0, claim.taskId), "arts")) ?? "[]") as Artifact[];
  let whole = "";
  for (let index = 0; index < count; index++) {
    const piece = text(index);
    whole += piece;
    const update: NonNullable<StreamResponse["artifactUpdate"]> = {
      taskId: claim.taskId,
      contextId,
      artifact: { artifactId, parts: [{ text: piece }] },
    };
    if (index > 0) update.append = true;
    if (index === count - 1) update.lastChunk = true;
    const artifacts = [...stored.filter((a) => a.artifactId !== artifactId), { artifactId, parts: [{ text: whole }] }];
    const result = await h.actor.ledger.transition({
      claim,
      kind: "artifact",
      state: "TASK_STATE_WORKING",
      event: { artifactUpdate: update },
      artifacts,
      retentionSeconds: 3600,
      journalRetentionSeconds: 600,
    });
    if (!result.ok) throw new Error(`artifact chunk ${index} refused: ${result.reason}`);
    await options.after?.(index);
    if (options.gapMs) await Bun.sleep(options.gapMs);
  }
  return whole;
}

/** Writes one artifact event replacing the artifact `artifactId` with `text` (not a chunk). */
export async function emitArtifact(h: Harness, claim: Claim, artifactId: string, text: string): Promise<void> {
  const contextId = (await h.redis.hget(h.keys.task(0, claim.taskId), "ctx")) ?? "";
  const artifact: Artifact = { artifactId, parts: [{ text }] };
  const result = await h.actor.ledger.transition({
    claim,
    kind: "artifact",
    state: "TASK_STATE_WORKING",
    event: { artifactUpdate: { taskId: claim.taskId, contextId, artifact } },
    artifacts: [artifact],
    retentionSeconds: 3600,
    journalRetentionSeconds: 600,
  });
  if (!result.ok) throw new Error(`artifact refused: ${result.reason}`);
}

/** The task's journal as stored, oldest first. */
export async function journal(
  h: Harness,
  taskId: string,
): Promise<{ id: string; rev: number; event: StreamResponse }[]> {
  const rows = await h.redis.xrange(h.keys.journal(0, taskId), "-", "+");
  return rows.map(([id, fields]) => parseJournalEntry(id, fields));
}

/** Live members of the stream lease sets: the installation's, a client's and a task's. */
export async function leaseCounts(
  h: Harness,
  clientId: string,
  taskId?: string,
): Promise<{ installation: number; client: number; task: number }> {
  const now = Date.now();
  const count = (key: string) => h.redis.zcount(key, `(${now}`, "+inf");
  return {
    installation: await count(`${h.prefix}streams`),
    client: await count(`${h.prefix}{0}:streams:client:${clientId}`),
    task: taskId === undefined ? 0 : await count(`${h.prefix}{0}:streams:task:${taskId}`),
  };
}

/** Keys of the stream lease sets under the test's prefix. */
export async function streamKeys(h: Harness): Promise<string[]> {
  return (await h.redis.keys(`${h.prefix}*streams*`)).sort();
}
