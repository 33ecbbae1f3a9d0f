// The end of a `send` for people: the answer on stdout (artifact text, or the agent's question), a line on stderr when
// the task did not complete, and the exit code that says how it ended.
import { artifactsText, messageText, stateLabel } from "../client/index.ts";
import type { Message, Task } from "../protocol/index.ts";
import { EXIT_CODES, stateExitCode } from "./client-failure.ts";
import type { Terminal } from "./terminal.ts";

export interface Outcome {
  readonly task?: Task | undefined;
  /** The agent answered with a message instead of a task. */
  readonly message?: Message | undefined;
}

function line(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

/**
 * Prints the outcome and returns the exit code. `textShown`: the artifact text was already streamed to stdout.
 */
export function reportOutcome(io: Terminal, outcome: Outcome, textShown = false): number {
  const { task, message } = outcome;
  if (!task) {
    const text = messageText(message);
    if (text !== "") io.out(line(text));
    return EXIT_CODES.ok;
  }
  const state = task.status.state;
  const said = messageText(task.status.message).trim();
  const artifacts = artifactsText(task.artifacts);
  const id = task.id;
  switch (state) {
    case "TASK_STATE_COMPLETED":
      if (!textShown) {
        const answer = artifacts !== "" ? artifacts : said;
        if (answer !== "") io.out(line(answer));
      }
      break;
    case "TASK_STATE_INPUT_REQUIRED":
    case "TASK_STATE_AUTH_REQUIRED":
      if (said !== "") io.out(line(said));
      io.err(`task ${id} waits (${stateLabel(state)}); answer with: a2a-runtime send --task ${id} "…"\n`);
      break;
    case "TASK_STATE_FAILED":
    case "TASK_STATE_REJECTED":
    case "TASK_STATE_CANCELED":
      if (!textShown && artifacts !== "") io.out(line(artifacts));
      io.err(`task ${id} ended ${stateLabel(state)}${said === "" ? "" : `: ${said}`}\n`);
      break;
    default:
      io.err(`task ${id} is still ${stateLabel(state)}; follow it with: a2a-runtime task get ${id}\n`);
  }
  return stateExitCode(state);
}
