// claim-8.lua called by name: an actor takes a queued (or lease-expired) run, or defers it at its client's
// running-run limit; with `read`, the same step returns the task (the run's first step moves it to WORKING).
import type { TaskState } from "../../protocol/index.ts";
import {
  codeMeaning,
  defineScript,
  replyNumber,
  replyString,
  replyStrings,
  type ScriptName,
  type ScriptReply,
} from "../scripts.ts";
import type { StoredTask } from "../task-view.ts";

/** What each non-list reply of claim means (see the script's header). */
export const CLAIM_CODES = {
  0: "deferred",
  [-1]: "orphan",
  [-2]: "finished",
  [-3]: "stale",
  [-4]: "leased",
} as const;

export type ClaimCode = (typeof CLAIM_CODES)[keyof typeof CLAIM_CODES];

/** A run a claim took. `fence` must accompany every write. */
export interface ClaimedRun {
  fence: number;
  tries: number;
  /** tries > maxAttempts: the actor must fail the task and dead-letter the entry instead of running it. */
  exhausted: boolean;
  cancelRequested: boolean;
  state: TaskState;
  clientId: string;
  profile: string;
  /**
   * The task as the claim found it, when the run is to run and the claim was asked to read it (ARGV `read`); its
   * caller, which knows the task's id, decodes it.
   */
  stored?: StoredTask;
}

export type ClaimReply = ({ ok: true } & ClaimedRun) | { ok: false; code: ClaimCode };

/**
 * Claim's reply read for `name`: claim's own, or the next run's claim that transition returns after a run's end (the
 * same claim-run code in both scripts).
 */
export function decodeClaimReply(name: ScriptName, reply: ScriptReply): ClaimReply {
  if (!Array.isArray(reply)) return { ok: false, code: codeMeaning(name, CLAIM_CODES, reply) };
  const [fence, tries, exhausted, cancel, state, clientId, profile, fields, chunks] = reply;
  return {
    ok: true,
    fence: replyNumber(name, fence),
    tries: replyNumber(name, tries),
    exhausted: exhausted === 1,
    cancelRequested: cancel === 1,
    // the state the script read from the task, which only the journal's scripts write
    state: replyString(name, state) as TaskState,
    clientId: replyString(name, clientId),
    profile: replyString(name, profile),
    ...(fields === undefined
      ? {}
      : {
          stored: {
            fields: replyStrings(name, fields),
            chunks: chunks === undefined ? undefined : replyString(name, chunks),
          },
        }),
  };
}

export const CLAIM = defineScript({
  name: "claim",
  keys: ["run", "task", "client", "clientRunning", "clientDeferred", "deferred", "queue", "chunks"],
  args: ["owner", "leaseMs", "entryId", "maxAttempts", "clientId", "clientMaxRunningTasks", "group", "read"],
  decode: (reply) => decodeClaimReply("claim", reply),
});
