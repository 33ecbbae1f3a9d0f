// One task's stream of StreamResponses: the snapshot first, then every journal entry after the snapshot's cursor, in
// order, each once; it follows the task through the process-wide journal tail and ends at a closing state. It writes
// to an EventSink that its binding framed (SSE for JSON-RPC and HTTP+JSON); ending releases the stream's leases and its
// follower at once; it never touches the task.
import { type JournalEntry, type Snapshot, type TaskHead, type TaskViewOptions, toTask } from "../journal/index.ts";
import { isTerminal, TaskNotFoundError, type TaskState } from "../protocol/index.ts";
import type { EventSink } from "./event-sink.ts";
import type { GatewayContext } from "./gateway-context.ts";
import type { HeadFollower } from "./journal-tail.ts";
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

/** Where a stream stands: the task's ids, and its state and revision after the last event sent. */
export interface StreamPosition {
  readonly taskId: string;
  readonly contextId: string;
  state: TaskState;
  rev: number;
}

export interface TaskStreamInput {
  clientId: string;
  snapshot: Snapshot;
  /** How the first event shows the task (SendStreamingMessage's historyLength). */
  view: TaskViewOptions;
  lease: StreamLease;
  /**
   * The stream of a message just sent (SendStreamingMessage): when its task has already ended or stopped for input by
   * the time the stream opens (a fast run), the snapshot is followed by the status update the run ended with, so that
   * the stream ends on it as it would have had it opened sooner.
   */
  sentMessage?: boolean;
}

/** What a streaming operation resolves with: its binding opens it on a sink of its own framing. */
export interface TaskStreamSource {
  readonly taskId: string;
  readonly contextId: string;
  /** Sends the snapshot, then follows the task until a closing state; the sink's end releases the leases. Never throws. */
  open(sink: EventSink): void;
  /** Releases the leases of a source that will never be opened (its binding failed before it could open it). */
  abandon(): void;
}

class TaskStream implements HeadFollower {
  readonly clientId: string;
  readonly taskId: string;
  private cursor: string;
  private readonly position: StreamPosition;
  private pumping = false;
  private again = false;
  private resyncing = false;
  /** The newest revision a head reported. */
  private headRev = 0;

  constructor(
    private readonly context: GatewayContext,
    private readonly sink: EventSink,
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
    this.sink.send({ task }, this.position);
    if (closesStream(this.position.state)) {
      if (this.input.sentMessage) {
        const ended = { taskId: task.id, contextId: task.contextId, status: task.status };
        this.sink.send({ statusUpdate: ended }, this.position);
      }
      this.sink.end("done");
      return;
    }
    const unfollow = this.context.tail.follow(this);
    this.sink.onEnd(unfollow);
  }

  /** After a change: the journal entries after the cursor, or, when there are none for a newer revision, a resync. */
  onHead(head: TaskHead | undefined): void {
    if (!this.sink.open) return;
    if (!head) {
      this.sink.fail(new TaskNotFoundError(this.taskId));
      return;
    }
    this.headRev = Math.max(this.headRev, head.rev);
    if (compareEntryIds(head.cursor, this.cursor) > 0) this.pump();
    else if (head.rev > this.position.rev && !this.pumping && !this.resyncing) void this.readAndResync();
  }

  /** Reads the whole task for a resync, unless its journal has moved on meanwhile (then the entries are sent). */
  private async readAndResync(): Promise<void> {
    this.resyncing = true;
    let snapshot: Snapshot | undefined;
    try {
      snapshot = await this.context.journal.snapshot(this.clientId, this.taskId);
    } catch (error) {
      this.sink.fail(error);
      return;
    } finally {
      this.resyncing = false;
    }
    if (!this.sink.open || this.pumping) return;
    if (!snapshot) this.sink.fail(new TaskNotFoundError(this.taskId));
    else if (compareEntryIds(snapshot.cursor, this.cursor) > 0) this.pump();
    else if (snapshot.record.rev > this.position.rev) this.resync(snapshot);
  }

  /**
   * A newer revision without newer journal entries: the task ended and its journal was deleted before this stream's
   * lease was seen (a journal kept for 0 s goes with the terminal step when no stream follows the task). The snapshot
   * stands for the events missed, sent as the events a follower would have ended with: each artifact whole (an
   * update that replaces what was sent of it), then the status.
   */
  private resync(snapshot: Snapshot): void {
    this.position.state = snapshot.record.state;
    this.position.rev = snapshot.record.rev;
    const task = toTask(snapshot.record, this.input.view);
    const ids = { taskId: task.id, contextId: task.contextId };
    for (const artifact of task.artifacts ?? []) {
      this.sink.send({ artifactUpdate: { ...ids, artifact, lastChunk: true } }, this.position);
    }
    this.sink.send({ statusUpdate: { ...ids, status: task.status } }, this.position);
    if (closesStream(this.position.state)) this.sink.end("done");
  }

  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.drain()
      .catch((error: unknown) => this.sink.fail(error))
      .then(() => {
        this.pumping = false;
        if (!this.sink.open) return;
        if (this.again) this.pump();
        // a revision a head reported that no entry delivered: its journal went (see resync)
        else if (this.headRev > this.position.rev && !this.resyncing) void this.readAndResync();
      });
  }

  /** Reads and sends entries after the cursor until none is left; parks while the client's buffer is full. */
  private async drain(): Promise<void> {
    do {
      this.again = false;
      if (this.sink.full) {
        this.sink.onDrain(() => this.pump());
        return;
      }
      let entries: JournalEntry[];
      try {
        entries = await this.context.journal.readJournal(this.clientId, this.taskId, this.cursor, JOURNAL_BATCH);
      } catch (error) {
        this.sink.fail(error);
        return;
      }
      for (const entry of entries) {
        if (!this.sink.open || compareEntryIds(entry.id, this.cursor) <= 0) continue;
        this.deliver(entry);
        if (this.sink.full) break;
      }
      if (entries.length === JOURNAL_BATCH || this.sink.full) this.again = true;
    } while (this.again && this.sink.open);
  }

  private deliver(entry: JournalEntry): void {
    const status = entry.event.statusUpdate?.status ?? entry.event.task?.status;
    if (status) this.position.state = status.state;
    this.position.rev = entry.rev;
    this.cursor = entry.id;
    this.sink.send(entry.event, this.position);
    if (closesStream(this.position.state)) this.sink.end("done");
  }
}

/**
 * The source of a task's stream whose stream leases are held. Opening it ties the leases to the sink's end, sends the
 * snapshot and follows the journal.
 */
export function taskStreamSource(context: GatewayContext, input: TaskStreamInput): TaskStreamSource {
  let opened = false;
  return {
    taskId: input.snapshot.record.id,
    contextId: input.snapshot.record.contextId,
    open(sink: EventSink): void {
      opened = true;
      sink.onEnd(() => void context.streamLeases.release(input.lease));
      new TaskStream(context, sink, input).start();
    },
    abandon(): void {
      if (!opened) void context.streamLeases.release(input.lease);
    },
  };
}
