// transition-22.lua called by name: one step of a task written with the run's fencing token; a step that ends the
// leg also acknowledges the queue entry.
import { codeMeaning, defineScript, replyNumber, replyString } from "../scripts.ts";

/** What each negative reply of transition means (see the script's header). */
export const TRANSITION_CODES = {
  [-1]: "missing",
  [-2]: "stale",
  [-3]: "illegal",
  [-4]: "interrupted-limit",
} as const;

export type TransitionReply =
  /** `oldestDeferred` is there when the step acknowledged its queue entry: the client's oldest deferred run, or null. */
  | { ok: true; rev: number; acked?: true; oldestDeferred?: string | null }
  | { ok: false; reason: (typeof TRANSITION_CODES)[keyof typeof TRANSITION_CODES] };

/** KEYS[1..9] of transition, which cancel's begin with too. */
export const TASK_STEP_KEYS = [
  "task",
  "run",
  "journal",
  "clientTasks",
  "clientActive",
  "profileActive",
  "pushConfigs",
  "pushQueue",
  "pushReady",
] as const;

/**
 * The named arguments come first; then the call passes, as `rest`, the artifact events (StreamResponse JSON, as many
 * as `artifactCount` says) followed by the status event when `state` is not "".
 */
export const TRANSITION = defineScript({
  name: "transition",
  keys: [
    ...TASK_STEP_KEYS,
    "clientRunning",
    "clientInterrupted",
    "inputDue",
    "purge",
    "bytes",
    "chunks",
    "taskStreams",
    "queue",
    "clientDeferred",
    "contextTasks",
    "client",
    "clientWaiting",
    "waiting",
  ],
  args: [
    "fence",
    "state",
    "status",
    "artifacts",
    "historyMessage",
    "statusTimestampMs",
    "retentionSeconds",
    "journalRetentionSeconds",
    "eventsChannel",
    "inputTimeoutSeconds",
    "ackEntry",
    "group",
    "clientMaxInterruptedTasks",
    "lead",
    "artifactCount",
  ],
  decode(reply): TransitionReply {
    if (Array.isArray(reply)) {
      const oldest = replyString("transition", reply[1]);
      return {
        ok: true,
        rev: replyNumber("transition", reply[0]),
        acked: true,
        oldestDeferred: oldest === "" ? null : oldest,
      };
    }
    if (typeof reply === "number" && reply > 0) return { ok: true, rev: reply };
    return { ok: false, reason: codeMeaning("transition", TRANSITION_CODES, reply) };
  },
});
