// The readable text of parts, messages and artifacts, for people: text parts as they are, other parts on lines of
// their own (data as JSON, url as the URL, raw bytes as a short description).
import type { Artifact, Message, Part, TaskState } from "../protocol/index.ts";

/** One part as text: its text, its data as JSON, its URL, or a description of its bytes. */
export function partText(part: Part): string {
  if ("text" in part && typeof part.text === "string") return part.text;
  if ("url" in part && typeof part.url === "string") return part.url;
  if ("raw" in part && typeof part.raw === "string") {
    const name = part.filename ? ` ${part.filename}` : "";
    const type = part.mediaType ? ` (${part.mediaType})` : "";
    return `[file${name}${type}, ${Math.floor((part.raw.replace(/=+$/, "").length * 3) / 4)} bytes]`;
  }
  if ("data" in part) return JSON.stringify(part.data) ?? "null";
  return "";
}

/** Parts as text: consecutive text parts are joined as they are (streamed chunks), any other part gets its own line. */
export function partsText(parts: readonly Part[] | undefined): string {
  let out = "";
  for (const part of parts ?? []) {
    if ("text" in part && typeof part.text === "string") {
      out += part.text;
      continue;
    }
    if (out !== "" && !out.endsWith("\n")) out += "\n";
    out += `${partText(part)}\n`;
  }
  return out;
}

/** The text of a message, "" when there is none. */
export function messageText(message: Message | undefined): string {
  return partsText(message?.parts);
}

/** The text of each artifact, in order, separated by a line break. */
export function artifactsText(artifacts: readonly Artifact[] | undefined): string {
  return (artifacts ?? [])
    .map((artifact) => partsText(artifact.parts))
    .filter((text) => text !== "")
    .join("\n");
}

/** "TASK_STATE_INPUT_REQUIRED" → "input required"; undefined (no task yet) → "sending". */
export function stateLabel(state: TaskState | undefined): string {
  return state === undefined
    ? "sending"
    : state
        .replace(/^TASK_STATE_/, "")
        .replaceAll("_", " ")
        .toLowerCase();
}
