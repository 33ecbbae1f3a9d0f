// transition-22.lua called by name: one step of a task written with the run's fencing token; a step that ends the
// leg also acknowledges the queue entry, and may claim the actor's next queued run.
import { codeMeaning, defineScript, replyNumber, replyString } from "../scripts.ts";
import { type ClaimReply, decodeClaimReply } from "./claim.ts";

/** What each negative reply of transition means (see the script's header). */
export const TRANSITION_CODES = {
  [-1]: "missing",
  [-2]: "stale",
  [-3]: "illegal",
  [-4]: "interrupted-limit",
  [-5]: "output-limit",
} as const;

/** The next queued run a run's end read for its actor (a queue entry, as the queue reader gives it) and its claim. */
export interface NextRunReply {
  readonly entry: { shard: number; id: string; runId: string; taskId: string; clientId: string };
  readonly claim: ClaimReply;
}

export type TransitionReply =
  /**
   * `oldestDeferred` is there when the step acknowledged its queue entry: the client's oldest deferred run, or null;
   * `next` when the step was asked to claim its actor's next run and a queue had one.
   */
  | { ok: true; rev: number; acked?: true; oldestDeferred?: string | null; next?: NextRunReply }
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
  "pushOutbox",
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
    "nextOwner",
    "nextLeaseMs",
    "nextMaxAttempts",
    "clientMaxRunningTasks",
    "keyPrefix",
    "nextShards",
    "maxTaskBytes",
    "artifactCount",
  ],
  decode(reply): TransitionReply {
    if (Array.isArray(reply)) {
      const oldest = replyString("transition", reply[1]);
      const acked = {
        ok: true,
        rev: replyNumber("transition", reply[0]),
        acked: true,
        oldestDeferred: oldest === "" ? null : oldest,
      } as const;
      if (reply.length === 2) return acked;
      const [shard, id, runId, taskId, clientId, claim] = reply.slice(2);
      const entry = {
        shard: replyNumber("transition", shard),
        id: replyString("transition", id),
        runId: replyString("transition", runId),
        taskId: replyString("transition", taskId),
        clientId: replyString("transition", clientId),
      };
      return { ...acked, next: { entry, claim: decodeClaimReply("transition", claim ?? null) } };
    }
    if (typeof reply === "number" && reply > 0) return { ok: true, rev: reply };
    return { ok: false, reason: codeMeaning("transition", TRANSITION_CODES, reply) };
  },
});
