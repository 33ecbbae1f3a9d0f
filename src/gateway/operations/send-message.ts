// SendMessage: accepts a new task or resumes an interrupted one (one atomic script each), then answers at once
// (returnImmediately) or waits, holding a waiting lease of the installation's and of the client's share, until the task
// is terminal or interrupted.

import { clientWaitingShare } from "../../config/index.ts";
import {
  type Accepted,
  type AcceptInput,
  storeFailure,
  type TaskRecord,
  type TaskViewOptions,
  toTask,
  WaitingFullError,
} from "../../journal/index.ts";
import type { SendMessageResponse } from "../../protocol/index.ts";
import {
  BlockingDeadlineExceededError,
  CapacityError,
  INTERRUPTED_STATES,
  isInterrupted,
  isTerminal,
  REFUSAL_REASONS,
  TaskNotFoundError,
  type TaskState,
  TERMINAL_STATES,
} from "../../protocol/index.ts";
import { carrierOf } from "../../tracing/index.ts";
import { inlinePushConfig } from "../push-config-rules.ts";
import { traceWait } from "../request-span.ts";
import type { WaitingRefusal } from "../waiting-leases.ts";
import { checkIncomingMessage, checkMetadataSize } from "./message-checks.ts";
import { type OperationCall, stopIfTimedOut } from "./operation-call.ts";

/** The two methods that send a message: both accept or resume a task the same way. */
export type SendMethod = "SendMessage" | "SendStreamingMessage";

/**
 * How long an answer waits for its waiting lease to be released (ms). Past it the answer goes out anyway and the
 * release finishes in the background (or the lease lapses after its TTL): a paused or stalled Redis must not hold a
 * 504 past the blocking deadline.
 */
const RELEASE_WAIT_MS = 250;

/** Waits for `work` at most `ms`; `work` never rejects (a release logs its own failure). */
async function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work, late]);
  clearTimeout(timer);
}

/** The states that end a blocking wait: only a change to one of them is worth reading the task for. */
const SETTLED_STATES: ReadonlySet<TaskState> = new Set([...TERMINAL_STATES, ...INTERRUPTED_STATES]);

function settled(record: TaskRecord): boolean {
  return isTerminal(record.state) || isInterrupted(record.state);
}

/**
 * Runs the accept script, or the resume script for a follow-up to an existing task: one round trip either way (the
 * resume script checks the task itself). Shared with SendStreamingMessage. `created` is false when the messageId was
 * seen before with the same content (nothing was written). With `withTask`, a created or resumed task comes back as
 * `record`, so that an answer needs no second read.
 */
export async function store(call: OperationCall<SendMethod>, input: AcceptInput, withTask = false): Promise<Accepted> {
  const { journal, metrics } = call.context;
  const taskId = input.message.taskId;
  if (taskId === undefined) {
    const accepted = await journal.accept(input);
    if (accepted.created) metrics.accepts.inc({ profile: input.profile, kind: "new" });
    return accepted;
  }
  const resumed = await journal.resume({ ...input, taskId }, withTask);
  if (resumed.created) metrics.accepts.inc({ profile: input.profile, kind: "resume" });
  return resumed;
}

/**
 * What SendMessage and SendStreamingMessage store, and how they show the task, after every check that needs no Redis.
 * Throws the message checks' errors.
 */
export function messageInput(call: OperationCall<SendMethod>): { input: AcceptInput; view: TaskViewOptions } {
  const { client, profile: runtime, params } = call;
  const profile = runtime.profile;
  checkMetadataSize(params.metadata, params.message);
  const message = checkIncomingMessage(params.message, runtime);
  const configuration = params.configuration;
  // Stored with the task in the same step (-32003 when the profile offers no push notifications).
  const pushConfig = inlinePushConfig(call.context.config, profile, configuration?.taskPushNotificationConfig);
  const input: AcceptInput = {
    clientId: client.id,
    profile: profile.name,
    profileQuota: profile.quota.maxActiveTasks,
    profileMaxStoredBytes: profile.quota.maxStoredBytes,
    message,
    metadata: params.metadata,
    pushConfig,
    traceContext: carrierOf(call.span),
  };
  return { input, view: { historyLength: configuration?.historyLength } };
}

/** The answer to a blocking request that found its client's share, or the installation's, of waiting slots taken. */
function waitingRefusal(call: OperationCall<"SendMessage">, refused: WaitingRefusal): CapacityError {
  const { config, retryAfterSeconds } = call.context;
  if (refused === "installation") {
    const max = config.server.maxWaitingRequests;
    return new CapacityError(
      REFUSAL_REASONS.waitingRequests,
      `${max} blocking requests are waiting already; retry, or send returnImmediately: true and poll`,
      retryAfterSeconds,
      { limit: String(max) },
    );
  }
  const max = clientWaitingShare(config);
  return new CapacityError(
    REFUSAL_REASONS.clientWaitingRequests,
    `This client has ${max} blocking requests waiting already; retry, or send returnImmediately: true and poll`,
    retryAfterSeconds,
    { limit: String(max) },
  );
}

export async function sendMessage(call: OperationCall<"SendMessage">): Promise<SendMessageResponse> {
  const { context, client, params } = call;
  const { journal, waiting, tail, config } = context;
  const profile = call.profile.profile;
  const { input, view } = messageInput(call);

  if (params.configuration?.returnImmediately === true) {
    // A repeated messageId (created: false) is the one case that reads the task after the script.
    const { taskId, record } = await store(call, input, true);
    const current = record ?? (await journal.snapshot(client.id, taskId, profile.name))?.record;
    if (!current) throw new TaskNotFoundError(taskId);
    return { task: toTask(current, view) };
  }

  const takeWaitingLeases = async () => {
    const refused = await waiting.acquire(call.requestId, client.id).catch(storeFailure);
    if (refused) throw waitingRefusal(call, refused);
  };
  // A new task's accept takes the waiting leases in its own step (one node); a follow-up, or a Cluster, first.
  const joined = input.message.taskId === undefined ? waiting.joinAccept(call.requestId, client.id) : undefined;
  if (!joined) await takeWaitingLeases();
  let released: Promise<void> | undefined;
  try {
    stopIfTimedOut(call);
    // taken before the write: with the task the accept script returns, the wait needs no first read of it
    const mark = tail.mark();
    const { taskId, record, created } = await store(call, { ...input, waiting: joined }).catch((error: unknown) => {
      throw error instanceof WaitingFullError ? waitingRefusal(call, error.which) : error;
    });
    // a retry's answer took no waiting lease: it waits for the earlier task under one of its own
    if (joined && !created) await takeWaitingLeases();
    const known = record && input.message.taskId === undefined ? { record, mark } : undefined;
    const seconds = config.server.blockingWaitSeconds;
    const timeoutMs = seconds * 1000 - (performance.now() - call.startedAt);
    // a notice of a settling state ends the wait once the task is read: the leases go back in that read's round trip
    const onNotice = () => {
      released ??= waiting.release(call.requestId);
    };
    const outcome = await traceWait(call.span, taskId, () =>
      tail.waitUntil(client.id, taskId, settled, {
        timeoutMs,
        signal: call.signal,
        states: SETTLED_STATES,
        known,
        onNotice,
        // the run's end gives back the leases its accept took and sends the task here: no read, no release
        replyMember: joined && created ? joined.member : undefined,
      }),
    );
    if (outcome.kind === "met" && outcome.answered) waiting.forget(call.requestId);
    context.metrics.wait(outcome.kind, call.startedAt);
    if (outcome.kind === "met") return { task: toTask(outcome.snapshot.record, view) };
    if (outcome.kind === "gone") throw new TaskNotFoundError(taskId);
    throw new BlockingDeadlineExceededError(taskId, seconds);
  } finally {
    await within(released ?? waiting.release(call.requestId), RELEASE_WAIT_MS);
  }
}
