// Tasks as people read them: `task get` shows ids, state, the status message, the artifacts' text and the history;
// `task list` shows one tab-separated row per task.
import { artifactsText, messageText, stateLabel } from "../client/index.ts";
import type { Message, Task } from "../protocol/index.ts";

export const TASK_ROW_HEADER = ["id", "state", "updated", "context"].join("\t");

function indent(text: string, prefix: string): string {
  return text
    .replace(/\n$/, "")
    .split("\n")
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

function historyLine(message: Message): string {
  const who = message.role === "ROLE_USER" ? "user" : message.role === "ROLE_AGENT" ? "agent" : message.role;
  return indent(messageText(message), "    ").replace(/^ {4}/, `  ${who}: `);
}

/** The readable form of one task, ending with a line break. */
export function formatTask(task: Task): string {
  const lines = [
    `task      ${task.id}`,
    `context   ${task.contextId}`,
    `state     ${stateLabel(task.status.state)}${task.status.timestamp ? `  (${task.status.timestamp})` : ""}`,
  ];
  const said = messageText(task.status.message).trim();
  if (said !== "") lines.push(`status    ${indent(said, "          ").trimStart()}`);
  const artifacts = task.artifacts ?? [];
  for (const artifact of artifacts) {
    const name = artifact.name ? ` (${artifact.name})` : "";
    lines.push(`artifact  ${artifact.artifactId}${name}`);
    const text = artifactsText([artifact]);
    if (text !== "") lines.push(indent(text, "  "));
  }
  const history = task.history ?? [];
  if (history.length > 0) {
    lines.push(`history   ${history.length} message(s)`);
    for (const message of history) lines.push(historyLine(message));
  }
  return `${lines.join("\n")}\n`;
}

/** One row of `task list`: id, state, status timestamp, context. */
export function formatTaskRow(task: Task): string {
  return [task.id, stateLabel(task.status.state), task.status.timestamp ?? "-", task.contextId].join("\t");
}
