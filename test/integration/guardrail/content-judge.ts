// Judges what a channel carried against a generated case: content (any Greek letter) may appear only as a whole
// artifact or as the interrupt's question, only when the check passed, and in the journal only after every progress
// event, each artifact in one event. Returns problems as text so that a failing seed is named.
import type { StreamResponse } from "../../../src/protocol/index.ts";
import { CONTENT, expectedState, type GeneratedCase } from "./generated-output.ts";

const PROGRESS_KEY = "a2a-runtime/progress";
/** The progress interval of the gate, less a little for clock granularity. */
const MIN_PROGRESS_GAP_MS = 245;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;
const textOf = (parts: unknown): string =>
  Array.isArray(parts)
    ? parts.map((part) => (isObject(part) && typeof part.text === "string" ? part.text : "")).join("")
    : "";

/** `value` with every allowed whole piece of content taken out (JSON round trip first, so escapes are undone). */
function withoutAllowed(value: unknown, generated: GeneratedCase): unknown {
  const passed = expectedState(generated) !== "TASK_STATE_FAILED";
  const serialized = JSON.stringify(value) ?? "null";
  const questionAllowed = passed && serialized.includes("TASK_STATE_INPUT_REQUIRED");
  const expected = new Set(generated.artifacts.map((artifact) => JSON.stringify(artifact)));
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (!isObject(node)) return node;
    if (passed && typeof node.artifactId === "string" && expected.has(JSON.stringify(node))) return "<whole artifact>";
    if (questionAllowed && node.role === "ROLE_AGENT" && textOf(node.parts) === generated.message) return "<question>";
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, strip(child)]));
  };
  return strip(JSON.parse(serialized));
}

/** A problem when `value` (an SSE frame, a GetTask or ListTasks answer, a journal event) carries content it may not. */
export function leak(value: unknown, generated: GeneratedCase, channel: string): string | undefined {
  const rest = JSON.stringify(withoutAllowed(value, generated));
  if (CONTENT.test(rest))
    return `seed ${generated.seed} ${channel}: content outside a whole released piece: ${rest.slice(0, 300)}`;
  const update = isObject(value) ? (value.artifactUpdate as Record<string, unknown> | undefined) : undefined;
  if (update && (update.append === true || update.lastChunk !== true)) {
    return `seed ${generated.seed} ${channel}: an artifact event that is not whole (append or no lastChunk)`;
  }
  return undefined;
}

/** Problems with a finished task's journal: order of release, progress only before it, coalesced progress. */
export function journalProblems(events: readonly StreamResponse[], generated: GeneratedCase): string[] {
  const problems: string[] = [];
  const say = (what: string) => problems.push(`seed ${generated.seed} journal: ${what}`);
  for (const [index, event] of events.entries()) {
    const found = leak(event, generated, `journal event ${index}`);
    if (found) problems.push(found);
  }
  const firstContent = events.findIndex((event) => CONTENT.test(JSON.stringify(event)));
  const state = expectedState(generated);
  const last = events.at(-1)?.statusUpdate?.status;
  if (last?.state !== state) say(`ends in ${last?.state}, expected ${state}`);
  if (state === "TASK_STATE_FAILED") {
    if (firstContent >= 0) say(`content after a failed check, at event ${firstContent}`);
    if (textOf(last?.message?.parts) !== "The answer did not pass the content check.") say("not the generic message");
  } else {
    const released = events.slice(firstContent < 0 ? events.length - 1 : firstContent, -1);
    const artifacts = released.map((event) => event.artifactUpdate?.artifact);
    if (JSON.stringify(artifacts) !== JSON.stringify(generated.artifacts))
      say("the release is not one event per artifact");
  }
  const progress = events
    .slice(0, firstContent < 0 ? events.length : firstContent)
    .flatMap((event) => (event.statusUpdate?.metadata?.[PROGRESS_KEY] ? [event.statusUpdate] : []));
  const emitted = generated.steps.some((step) => !("text" in step) || step.text !== "");
  if (emitted && progress.length === 0) say("no progress event while the output was held");
  const counts = progress.map((update) => {
    const counted = update.metadata?.[PROGRESS_KEY] as { characters?: number } | undefined;
    return counted?.characters ?? -1;
  });
  if (counts.some((count, index) => count < (counts[index - 1] ?? 0) || count > generated.text.length)) {
    say(`progress counts out of order or too high: ${counts.join(",")}`);
  }
  for (let index = 1; index < progress.length; index++) {
    const gap =
      Date.parse(progress[index]!.status.timestamp ?? "") - Date.parse(progress[index - 1]!.status.timestamp ?? "");
    if (gap < MIN_PROGRESS_GAP_MS) say(`two progress events ${gap} ms apart`);
  }
  return problems;
}
