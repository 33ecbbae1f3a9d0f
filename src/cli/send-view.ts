// Shows a streaming send as it happens. On a terminal: a spinner status line on stderr until text arrives, then the
// text on stdout as it grows. Otherwise: one stderr line per state change and the text on stdout. --json: one
// StreamResponse per stdout line.
import { messageText, partsText, stateLabel, type TaskTracker } from "../client/index.ts";
import type { StreamResponse } from "../protocol/index.ts";
import type { Terminal } from "./terminal.ts";

export type ViewMode = "tty" | "plain" | "json";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** How often the spinner turns, in ms. */
export const SPINNER_INTERVAL_MS = 100;
const CLEAR_LINE = "\r\x1b[2K";
const MAX_LINE = 78;

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

export interface ViewClock {
  now(): number;
  every(ms: number, tick: () => void): () => void;
}

const SYSTEM_CLOCK: ViewClock = {
  now: () => Date.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  },
};

export class StreamView {
  /** artifactId → the text of it already written to stdout. */
  private readonly printed = new Map<string, string>();
  private lastText = "";
  private shownState = "";
  private announced = false;
  private status = "sending";
  private frame = 0;
  private startedAt = 0;
  private stopSpinner: (() => void) | undefined;
  private lineDrawn = false;

  constructor(
    private readonly io: Terminal,
    private readonly mode: ViewMode,
    private readonly clock: ViewClock = SYSTEM_CLOCK,
  ) {}

  /** Whether any artifact text has been written to stdout. */
  get textShown(): boolean {
    return this.printed.size > 0;
  }

  start(): void {
    if (this.mode !== "tty") return;
    this.startedAt = this.clock.now();
    this.draw();
    this.stopSpinner = this.clock.every(SPINNER_INTERVAL_MS, () => this.draw());
  }

  event(event: StreamResponse, tracker: TaskTracker): void {
    if (this.mode === "json") {
      this.io.out(`${JSON.stringify(event)}\n`);
      return;
    }
    const task = tracker.task;
    if (!task) return;
    const said = firstLine(messageText(task.status.message));
    const status = `${stateLabel(task.status.state)}${said === "" ? "" : `: ${said}`}`;
    if (this.mode === "plain") {
      if (!this.announced) this.io.err(`task ${task.id} (context ${task.contextId})\n`);
      if (status !== this.shownState) this.io.err(`${status}\n`);
    }
    this.announced = true;
    this.shownState = status;
    this.status = `${status} · task ${task.id}`;
    for (const artifact of task.artifacts ?? []) this.showArtifact(artifact.artifactId, partsText(artifact.parts));
  }

  /** Stops the spinner and ends the text with a line break. Call once, also after a failure. */
  finish(): void {
    this.halt();
    if (this.lastText !== "" && !this.lastText.endsWith("\n")) this.io.out("\n");
    this.lastText = "";
  }

  private showArtifact(id: string, text: string): void {
    const before = this.printed.get(id);
    let delta: string;
    if (before === undefined) {
      if (text === "") return;
      delta = this.lastText !== "" && !this.lastText.endsWith("\n") ? `\n${text}` : text;
    } else if (text.startsWith(before)) {
      delta = text.slice(before.length);
    } else {
      // The artifact was replaced rather than extended: show the new text whole.
      delta = `\n${text}`;
    }
    this.printed.set(id, text);
    if (delta === "") return;
    this.halt();
    this.io.out(delta);
    this.lastText = delta;
  }

  /** The text has begun (or the stream ended): the status line goes away for good. */
  private halt(): void {
    this.stopSpinner?.();
    this.stopSpinner = undefined;
    if (this.lineDrawn) this.io.err(CLEAR_LINE);
    this.lineDrawn = false;
  }

  private draw(): void {
    const seconds = ((this.clock.now() - this.startedAt) / 1000).toFixed(1);
    const frame = FRAMES[this.frame++ % FRAMES.length];
    const line = `${frame} ${this.status} · ${seconds} s`;
    // A line longer than the terminal would wrap, and clearing it would leave its first part behind.
    this.io.err(`${CLEAR_LINE}${line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line}`);
    this.lineDrawn = true;
  }
}
