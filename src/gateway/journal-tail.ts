// The process-wide follower of the task journal: ONE subscriber connection on keys.eventsChannel(), followers
// registered per task, a change answered by one read on the shared command connection when its notice's state matters
// to a follower and its revision is new: of the whole task when a follower needs it, else of its head (revision, state,
// journal cursor). However many requests wait, the gateway holds two Redis connections.

import {
  decodeTaskFields,
  type KeySpace,
  type RedisLike,
  type Snapshot,
  type StoredTask,
  subscribeWhenReady,
  type TaskHead,
  type TaskJournal,
  type TaskRecord,
} from "../journal/index.ts";
import type { Logger } from "../log.ts";
import type { TaskState } from "../protocol/index.ts";

interface FollowerOf {
  readonly clientId: string;
  readonly taskId: string;
  /**
   * The states worth a read: a change notice names the task's new state, and when every follower of the task skips
   * it, the task is not read (a blocking wait needs no read for WORKING progress). Unset: every change.
   */
  readonly states?: ReadonlySet<TaskState>;
  /**
   * Called in the tick in which the tail sends its read of the task for a notice of one of `states` (not for a
   * reconnect's or the safety tick's re-read): a write issued here shares the read's round trip on the command
   * connection. A blocking wait gives its waiting leases back here, since a notice of a state that ends it means the
   * wait is over once the read arrives.
   */
  readonly onNotice?: (state: TaskState) => void;
}

/**
 * Something that follows one task, after every change notice (a journal append, a subscriber reconnect, the safety
 * tick): `onSnapshot` gets the task's fresh snapshot, `onHead` only its head (revision, state, journal cursor; the
 * task is not read whole for it); either gets undefined once the task is gone. Calls for one task never overlap and
 * never go back in revision (one may repeat), so a follower that keeps a journal cursor can read the entries after it
 * (`TaskJournal.readJournal`) on each call and deliver them in order: that is how a stream consumer builds on this
 * tail, from heads, so that a long streamed answer is not read whole at each of its updates.
 */
export type TaskFollower = SnapshotFollower | HeadFollower;
export type SnapshotFollower = FollowerOf & { onSnapshot(snapshot: Snapshot | undefined): void; onHead?: undefined };
export type HeadFollower = FollowerOf & { onHead(head: TaskHead | undefined): void; onSnapshot?: undefined };

/**
 * Where the tail stood before a request sent a write that creates a task (taken with `mark()`): with the write's reply,
 * it tells `waitUntil` whether a notice of the task may have come before its follower did.
 */
export interface TailMark {
  readonly seq: number;
  readonly connection: number;
}

/**
 * A task as the request's own write left it (the accept script's reply: revision 1, SUBMITTED), and the mark taken
 * before that write. A wait that knows it needs no first read: a later change has a notice, and a notice that came
 * before the follower is in the tail's recent notices.
 */
export interface KnownTask {
  readonly record: TaskRecord;
  readonly mark: TailMark;
}

export type WaitOutcome =
  /** `answered`: the task came on this gateway's reply channel from the run's end, which gave the leases back. */
  | { kind: "met"; snapshot: Snapshot; answered?: true }
  | { kind: "gone" }
  | { kind: "timeout" }
  | { kind: "aborted" }
  | { kind: "stopped" };

export interface JournalTailOptions {
  /** A connection of its own: it enters subscriber mode. */
  subscriber: RedisLike;
  /**
   * This gateway's id: the tail also listens on `<events channel>:<gatewayId>`, where a run's end sends the task it
   * ended to the blocking request whose waiting leases its accept took (member `<gatewayId>:<requestId>`).
   */
  gatewayId?: string;
  /** Reads on the shared command connection, the safety tick's too. */
  journal: TaskJournal;
  keys: KeySpace;
  logger: Logger;
  /**
   * How often every followed task's revision is compared with the notices seen, in one pipeline, in case a notice was
   * lost (a subscriber reconnect re-checks at once). A revision no notice announced counts in `missedNotices`.
   */
  safetyIntervalMs?: number;
}

/** The first retry of a failed read (ms); it doubles up to READ_RETRY_MAX_MS while reads fail. */
const READ_RETRY_MS = 25;
const READ_RETRY_MAX_MS = 1000;
/**
 * Notices of tasks nobody follows here, kept (newest per task) for a wait that starts after its task's write: how many.
 * Past it the oldest go, and a wait whose mark is older than what went reads the task as if it knew nothing.
 */
const RECENT_NOTICES = 16_384;

interface RecentNotice {
  readonly state: TaskState | undefined;
  readonly rev: number;
  readonly seq: number;
}

interface Followed {
  readonly clientId: string;
  readonly taskId: string;
  readonly followers: Set<TaskFollower>;
  /** The revision of the last snapshot handed to the followers. */
  lastRev: number;
  /** The highest revision a notice announced (read or, when no follower wanted its state, skipped). */
  noticedRev: number;
  reading: boolean;
  dirty: boolean;
  /** The delay before the next retry of a failed read (ms); 0 while reads succeed. */
  retryMs: number;
}

/** A snapshot's head. */
function headOf(snapshot: Snapshot): TaskHead {
  return { rev: snapshot.record.rev, state: snapshot.record.state, cursor: snapshot.cursor };
}

/** Whether a follower wants a read after a change to `state`. */
function wantsState(follower: TaskFollower, state: TaskState): boolean {
  return !follower.states || follower.states.has(state);
}

/** Whether any follower of a task wants a read after a change to `state`. */
function wants(followed: Followed, state: TaskState): boolean {
  for (const follower of followed.followers) if (wantsState(follower, state)) return true;
  return false;
}

/** Tells the followers that want `state` that a read for a notice of it is being sent. */
function noticeFollowers(followed: Followed, state: TaskState): void {
  for (const follower of followed.followers) if (wantsState(follower, state)) follower.onNotice?.(state);
}

export class JournalTail {
  /** taskId → clientId → the task's followers. */
  private readonly tasks = new Map<string, Map<string, Followed>>();
  private readonly stoppers = new Set<() => void>();
  private safetyTimer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private missed = 0;
  /** taskId → the newest notice of a task nobody here follows, oldest first (see RECENT_NOTICES). */
  private readonly recent = new Map<string, RecentNotice>();
  /** Notices kept in `recent` so far; the `seq` of the last one evicted from it; subscriber reconnects so far. */
  private seq = 0;
  private evictedSeq = 0;
  private connection = 0;
  /** waiting lease member → the wait that a reply on this gateway's channel answers. */
  private readonly replies = new Map<string, (stored: StoredTask, taskId: string) => void>();

  /** The channel of the replies to this gateway's blocking requests, if it has an id. */
  private readonly repliesChannel: string | undefined;

  constructor(private readonly options: JournalTailOptions) {
    const { gatewayId, keys } = options;
    this.repliesChannel = gatewayId === undefined ? undefined : `${keys.eventsChannel()}:${gatewayId}`;
  }

  /** Subscribes to the events channel; resolves once the subscription is in place. */
  async start(): Promise<void> {
    const { subscriber, keys, logger } = this.options;
    // A notice is "<taskId> <new state> <rev>" (older publishers send less: then every follower reads).
    const channel = keys.eventsChannel();
    const replies = this.repliesChannel;
    subscriber.on("message", (from: string, message: string) => {
      if (from === replies) return this.reply(message);
      if (from !== channel) return; // the connection also carries other channels (revocations)
      const [taskId = "", state, rev] = message.split(" ");
      this.notice(taskId, state as TaskState | undefined, rev === undefined ? undefined : Number(rev));
    });
    let ready = false;
    subscriber.on("ready", () => {
      // After a reconnect ioredis subscribes again; notices sent in between are recovered by re-reading.
      if (ready) {
        this.connection += 1;
        this.recheckAll();
      }
      ready = true;
    });
    await subscribeWhenReady(subscriber, keys.eventsChannel());
    if (replies !== undefined) await subscriber.subscribe(replies);
    ready = true;
    const interval = this.options.safetyIntervalMs ?? 5000;
    this.safetyTimer = setInterval(() => this.recheckAll(), interval);
    logger.debug({ channel: keys.eventsChannel() }, "journal tail subscribed");
  }

  /** Where the tail stands now: take it before sending the write whose reply becomes a `KnownTask`. */
  mark(): TailMark {
    return { seq: this.seq, connection: this.connection };
  }

  /**
   * Registers a follower, then reads the task once: a change after registration is never missed. With `known` (the
   * follower's own write's reply, when nobody here follows the task yet) the first read is skipped unless a notice
   * newer than it came in between, or the tail cannot tell (a reconnect, or more notices than it keeps).
   */
  follow(follower: TaskFollower, known?: KnownTask): () => void {
    let byClient = this.tasks.get(follower.taskId);
    // only a task nobody here followed has its notices in `recent` (the others' go to their followers)
    const fromKnown = known !== undefined && byClient === undefined && this.trusts(known.mark);
    if (!byClient) {
      byClient = new Map();
      this.tasks.set(follower.taskId, byClient);
    }
    let followed = byClient.get(follower.clientId);
    if (!followed) {
      followed = {
        clientId: follower.clientId,
        taskId: follower.taskId,
        followers: new Set(),
        lastRev: -1,
        noticedRev: -1,
        reading: false,
        dirty: false,
        retryMs: 0,
      };
      byClient.set(follower.clientId, followed);
    }
    followed.followers.add(follower);
    if (fromKnown) this.startFrom(followed, known.record.rev);
    else this.refresh(followed);
    const entry = followed;
    return () => {
      entry.followers.delete(follower);
      if (entry.followers.size > 0) return;
      const current = this.tasks.get(entry.taskId);
      if (current?.get(entry.clientId) !== entry) return;
      current.delete(entry.clientId);
      if (current.size === 0) this.tasks.delete(entry.taskId);
    };
  }

  /**
   * Waits until `condition` holds for the client's task, the task is gone, `timeoutMs` passes, `signal` aborts or
   * the tail stops. Costs one timer and no Redis connection of its own.
   */
  waitUntil(
    clientId: string,
    taskId: string,
    condition: (record: TaskRecord) => boolean,
    options: {
      timeoutMs: number;
      signal?: AbortSignal | undefined;
      states?: ReadonlySet<TaskState>;
      /** The task as the request's own write left it (see `KnownTask`): no first read unless it could have missed news. */
      known?: KnownTask | undefined;
      /** See `FollowerOf.onNotice`: called at most once, before the wait's outcome. */
      onNotice?: (state: TaskState) => void;
      /**
       * The waiting lease member that the task's accept took (`WaitingLeases.joinAccept`): the run's end sends the
       * task to this gateway's reply channel under it, and the wait is met from that with no read ("answered").
       */
      replyMember?: string | undefined;
    },
  ): Promise<WaitOutcome> {
    if (this.stopped) return Promise.resolve({ kind: "stopped" });
    const { signal } = options;
    if (signal?.aborted) return Promise.resolve({ kind: "aborted" });
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: WaitOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (replyMember !== undefined) this.replies.delete(replyMember);
        signal?.removeEventListener("abort", onAbort);
        this.stoppers.delete(onStop);
        unfollow();
        resolve(outcome);
      };
      const onAbort = (): void => finish({ kind: "aborted" });
      const onStop = (): void => finish({ kind: "stopped" });
      const timer = setTimeout(() => finish({ kind: "timeout" }), Math.max(0, options.timeoutMs));
      signal?.addEventListener("abort", onAbort, { once: true });
      this.stoppers.add(onStop);
      // a known task that meets the condition already is read like any other, for its snapshot
      const known = options.known && !condition(options.known.record) ? options.known : undefined;
      const replyMember = this.repliesChannel === undefined ? undefined : options.replyMember;
      if (replyMember !== undefined) {
        this.replies.set(replyMember, (stored, repliedTaskId) => {
          if (repliedTaskId !== taskId) return;
          const record = decodeTaskFields(taskId, stored.fields, stored.chunks);
          if (record.clientId !== clientId) return;
          if (condition(record)) finish({ kind: "met", snapshot: { record, cursor: "" }, answered: true });
        });
      }
      let noticed = false;
      const onNotice =
        options.onNotice &&
        ((state: TaskState): void => {
          if (settled || noticed) return;
          noticed = true;
          options.onNotice?.(state);
        });
      const unfollow = this.follow(
        {
          clientId,
          taskId,
          ...(options.states ? { states: options.states } : {}),
          ...(onNotice ? { onNotice } : {}),
          onSnapshot: (snapshot) => {
            if (!snapshot) finish({ kind: "gone" });
            else if (condition(snapshot.record)) finish({ kind: "met", snapshot });
          },
        },
        known,
      );
    });
  }

  /** Tasks followed now (for tests and metrics). */
  get followedTasks(): number {
    return this.tasks.size;
  }

  /** Changes that the safety check found and no notice had announced (for tests and metrics; 0 when none is lost). */
  get missedNotices(): number {
    return this.missed;
  }

  /** Ends every wait (outcome "stopped"), stops the safety tick and leaves the channel. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.safetyTimer !== undefined) clearInterval(this.safetyTimer);
    for (const stop of [...this.stoppers]) stop();
    this.tasks.clear();
    this.recent.clear();
    await this.options.subscriber.unsubscribe().catch(() => {});
  }

  /**
   * A change of a task: read it for its followers unless the followers have seen that revision already or none of them
   * cares about the new state (a blocking wait reads nothing for WORKING progress, only for the state that ends it).
   */
  private notice(taskId: string, state: TaskState | undefined, rev: number | undefined): void {
    const byClient = this.tasks.get(taskId);
    const known = rev !== undefined && Number.isFinite(rev);
    if (!byClient) {
      if (known) this.remember(taskId, state, rev);
      return;
    }
    for (const followed of byClient.values()) {
      if (known) {
        if (rev <= followed.lastRev) continue;
        followed.noticedRev = Math.max(followed.noticedRev, rev);
      }
      if (state !== undefined && !wants(followed, state)) continue;
      if (state !== undefined) noticeFollowers(followed, state);
      this.refresh(followed);
    }
  }

  /**
   * A reply from a run's end: "<member> <taskId> " .. JSON [the task hash, flat; its chunk store]. Answers the wait
   * registered under the member, if it is still here; a reply nobody waits for (the request timed out or went away)
   * is dropped: the change notice that follows it does what it would have done without it.
   */
  private reply(message: string): void {
    const first = message.indexOf(" ");
    const second = message.indexOf(" ", first + 1);
    const answer = first > 0 ? this.replies.get(message.slice(0, first)) : undefined;
    if (second < 0 || !answer) return;
    let view: unknown;
    try {
      view = JSON.parse(message.slice(second + 1));
    } catch {
      return;
    }
    if (!Array.isArray(view) || !Array.isArray(view[0]) || typeof view[1] !== "string") return;
    const fields = view[0] as unknown[];
    if (!fields.every((field) => typeof field === "string")) return;
    answer({ fields: fields as string[], chunks: view[1] }, message.slice(first + 1, second));
  }

  /** Keeps the newest notice of a task nobody here follows, for a wait that starts after the task's write. */
  private remember(taskId: string, state: TaskState | undefined, rev: number): void {
    const before = this.recent.get(taskId);
    if (before && before.rev >= rev) return;
    this.seq += 1;
    // re-inserted, so that the map stays in `seq` order and the first entry is the oldest
    this.recent.delete(taskId);
    this.recent.set(taskId, { state, rev, seq: this.seq });
    if (this.recent.size > RECENT_NOTICES) {
      const [oldestId, oldest] = this.recent.entries().next().value as [string, RecentNotice];
      this.recent.delete(oldestId);
      this.evictedSeq = oldest.seq;
    }
  }

  /** Whether every notice since `mark` is still known: no reconnect, and nothing newer than it evicted. */
  private trusts(mark: TailMark): boolean {
    return mark.connection === this.connection && this.evictedSeq <= mark.seq;
  }

  /** A task known at `rev` from the follower's own write: read only for a notice since, as `notice` would. */
  private startFrom(followed: Followed, rev: number): void {
    followed.lastRev = rev;
    followed.noticedRev = rev;
    const news = this.recent.get(followed.taskId);
    this.recent.delete(followed.taskId);
    if (!news || news.rev <= rev) return;
    followed.noticedRev = news.rev;
    if (news.state === undefined) this.refresh(followed);
    else if (wants(followed, news.state)) {
      noticeFollowers(followed, news.state);
      this.refresh(followed);
    }
  }

  /**
   * Reads the task (whole when a follower needs it, else its head) and hands what it read to its followers; a notice
   * during the read causes one more read.
   */
  private refresh(followed: Followed): void {
    if (followed.reading) {
      followed.dirty = true;
      return;
    }
    followed.reading = true;
    void this.readLoop(followed);
  }

  private async readLoop(followed: Followed): Promise<void> {
    try {
      do {
        followed.dirty = false;
        const { journal } = this.options;
        const whole = [...followed.followers].some((follower) => follower.onSnapshot !== undefined);
        let snapshot: Snapshot | undefined;
        let head: TaskHead | undefined;
        try {
          if (whole) {
            snapshot = await journal.snapshot(followed.clientId, followed.taskId);
            head = snapshot && headOf(snapshot);
          } else {
            head = await journal.head(followed.clientId, followed.taskId);
          }
          followed.retryMs = 0;
        } catch (error) {
          // Read again soon (backing off while Redis fails); a waiter's own deadline bounds how long it goes without news.
          this.options.logger.warn({ err: error, taskId: followed.taskId }, "journal tail could not read a task");
          this.retryLater(followed);
          return;
        }
        if (head && head.rev < followed.lastRev) continue;
        followed.lastRev = head?.rev ?? followed.lastRev;
        for (const follower of [...followed.followers]) {
          if (follower.onHead) follower.onHead(head);
          // one that joined during a read of the head gets its snapshot from the read its joining asked for
          else if (whole) follower.onSnapshot(snapshot);
        }
      } while (followed.dirty && followed.followers.size > 0);
    } finally {
      followed.reading = false;
    }
  }

  private retryLater(followed: Followed): void {
    followed.retryMs = Math.min(READ_RETRY_MAX_MS, Math.max(READ_RETRY_MS, followed.retryMs * 2));
    setTimeout(() => {
      if (!this.stopped && followed.followers.size > 0) this.refresh(followed);
    }, followed.retryMs);
  }

  /**
   * Reads every followed task's revision and refreshes those that moved past every notice, or vanished. The reads are
   * separate commands issued in one tick and sent as issued (on a cluster to their own nodes, where an explicit
   * pipeline would have to stay on one node).
   */
  private recheckAll(): void {
    const all = [...this.tasks.values()].flatMap((byClient) => [...byClient.values()]);
    if (all.length === 0) return;
    const { journal, logger } = this.options;
    Promise.all(all.map((f) => journal.revision(f.clientId, f.taskId)))
      .then((revs) => {
        all.forEach((followed, index) => {
          const rev = revs[index];
          if (rev === undefined) this.refresh(followed);
          else if (rev > Math.max(followed.lastRev, followed.noticedRev)) {
            this.missed += 1;
            logger.warn({ taskId: followed.taskId, rev }, "journal tail found a change no notice announced");
            this.refresh(followed);
          }
        });
      })
      .catch((error: unknown) => logger.warn({ err: error }, "journal tail safety check failed"));
  }
}
