// One task's SSE stream: the snapshot first, then every journal entry after the snapshot's cursor, in order, each
// once; it follows the task through the process-wide journal tail and ends at a closing state. Ending releases the
// stream's leases and its follower at once; it never touches the task.

import { type JournalEntry, type Snapshot, type TaskViewOptions, toTask } from "../journal/index.ts";
import type { JsonRpcId } from "../protocol/index.ts";
import { isTerminal, type StreamResponse, TaskNotFoundError, type TaskState } from "../protocol/index.ts";
import type { GatewayContext } from "./gateway-context.ts";
import type { TaskFollower } from "./journal-tail.ts";
import { errorAnswer } from "./jsonrpc-errors.ts";
import { boundedFrame, errorFrame } from "./sse-frames.ts";
import { SseStream } from "./sse-stream.ts";
import type { StreamLease } from "./stream-leases.ts";

/** Journal entries read per XRANGE. */
export const JOURNAL_BATCH = 100;

/** A stream ends after sending an event that reaches one of these states; it stays open through AUTH_REQUIRED. */
export function closesStream(state: TaskState): boolean {
  return isTerminal(state) || state === "TASK_STATE_INPUT_REQUIRED";
}

/** Orders two stream entry ids (`<ms>-<seq>`). */
export function compareEntryIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split("-").map(Number);
  const [bMs = 0, bSeq = 0] = b.split("-").map(Number);
  return aMs - bMs || aSeq - bSeq;
}

export interface TaskStreamInput {
  /** The JSON-RPC id every event repeats. */
  rpcId: JsonRpcId;
  clientId: string;
  snapshot: Snapshot;
  /** How the first event shows the task (SendStreamingMessage's historyLength). */
  view: TaskViewOptions;
  lease: StreamLease;
  /** The request's signal: the client went away. */
  signal: AbortSignal;
}

class TaskStream implements TaskFollower {
  readonly clientId: string;
  readonly taskId: string;
  private cursor: string;
  /** Where the stream stands: the task's state and revision after the last event sent. */
  private readonly position: { taskId: string; contextId: string; state: TaskState; rev: number };
  private pumping = false;
  private again = false;

  constructor(
    private readonly context: GatewayContext,
    private readonly sse: SseStream,
    private readonly input: TaskStreamInput,
  ) {
    const { record, cursor } = input.snapshot;
    this.clientId = input.clientId;
    this.taskId = record.id;
    this.cursor = cursor;
    this.position = { taskId: record.id, contextId: record.contextId, state: record.state, rev: record.rev };
  }

  /** Sends the snapshot, then follows the task unless the snapshot already closes the stream. */
  start(): void {
    const task = toTask(this.input.snapshot.record, this.input.view);
    this.send({ task });
    if (closesStream(this.position.state)) {
      this.sse.end("done");
      return;
    }
    const unfollow = this.context.tail.follow(this);
    this.sse.onEnd(unfollow);
  }

  onSnapshot(snapshot: Snapshot | undefined): void {
    if (!this.sse.open) return;
    if (!snapshot) {
      this.fail(new TaskNotFoundError(this.taskId));
      return;
    }
    if (compareEntryIds(snapshot.cursor, this.cursor) > 0) this.pump();
  }

  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain()
      .catch((error: unknown) => this.fail(error))
      .then(() => {
        this.pumping = false;
        if (this.again && this.sse.open) this.pump();
      });
  }

  /** Reads and sends entries after the cursor until none is left; parks while the client's buffer is full. */
  private async drain(): Promise<void> {
    do {
      this.again = false;
      if (this.sse.full) {
        this.sse.onDrain(() => this.pump());
        return;
      }
      let entries: JournalEntry[];
      try {
        entries = await this.context.journal.readJournal(this.clientId, this.taskId, this.cursor, JOURNAL_BATCH);
      } catch (error) {
        this.fail(error);
        return;
      }
      for (const entry of entries) {
        if (!this.sse.open || compareEntryIds(entry.id, this.cursor) <= 0) continue;
        this.deliver(entry);
        if (this.sse.full) break;
      }
      if (entries.length === JOURNAL_BATCH || this.sse.full) this.again = true;
    } while (this.again && this.sse.open);
  }

  private deliver(entry: JournalEntry): void {
    const status = entry.event.statusUpdate?.status ?? entry.event.task?.status;
    if (status) this.position.state = status.state;
    this.position.rev = entry.rev;
    this.cursor = entry.id;
    this.send(entry.event);
    if (closesStream(this.position.state)) this.sse.end("done");
  }

  private send(event: StreamResponse): void {
    const maxBytes = this.context.config.server.streamFrameMaxBytes;
    const { frame, replaced } = boundedFrame(this.input.rpcId, event, this.position, maxBytes);
    if (replaced) this.context.logger.info({ taskId: this.taskId, rev: this.position.rev }, "SSE event too large");
    this.sse.write(frame);
  }

  /** Sends the failure as an error event and ends the stream. */
  private fail(error: unknown): void {
    const answer = errorAnswer(error, this.input.rpcId);
    if (answer.unexpected) this.context.logger.error({ err: error, taskId: this.taskId }, "stream failed");
    this.sse.write(errorFrame(answer.body));
    this.sse.end("failed");
  }
}

/**
 * Opens the SSE response for a task whose stream leases are held: registers it with the process's stream hub, ties
 * the leases to its end, sends the snapshot and follows the journal. Never throws.
 */
export function openTaskStream(context: GatewayContext, input: TaskStreamInput): Response {
  const sse = new SseStream(context.config.server.streamBufferMaxBytes, input.signal);
  sse.onEnd(() => void context.streamLeases.release(input.lease));
  context.streams.add(sse);
  new TaskStream(context, sse, input).start();
  return sse.response;
}
