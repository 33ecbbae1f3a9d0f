// accept-15.lua called by name: a new task, its run and its queue entry in one step (with a blocking request's waiting
// leases, on one node), or a refusal that wrote nothing.
import { codeMeaning, defineScript, replyNumber, replyString } from "../scripts.ts";

/** What each negative reply of accept means (see the script's header). */
export const ACCEPT_CODES = {
  [-1]: "worker",
  [-2]: "clientTasks",
  [-3]: "profileQuota",
  [-4]: "messageIdReused",
  [-5]: "unknownClient",
  [-6]: "clientStorage",
  [-7]: "profileStorage",
  [-8]: "interruptedTasks",
  [-9]: "clientWaiting",
  [-10]: "installationWaiting",
} as const;

export type AcceptReply =
  | { ok: true; created: boolean; taskId: string }
  | { ok: false; code: (typeof ACCEPT_CODES)[keyof typeof ACCEPT_CODES] };

/** Resume's keys before its journal, and accept's first seven (accept creates no journal: see accept-15.lua). */
const BEFORE_JOURNAL = ["live", "client", "clientActive", "profileActive", "dedup", "task", "run"] as const;
/** The keys after the journal in resume's KEYS[1..11], which follow accept's first seven at once. */
const AFTER_JOURNAL = ["clientTasks", "queue", "pushConfigs"] as const;

/** KEYS[1..11] of resume; accept takes them but the journal. */
export const ADMISSION_KEYS = [...BEFORE_JOURNAL, "journal", ...AFTER_JOURNAL] as const;

export const ACCEPT = defineScript({
  name: "accept",
  keys: [...BEFORE_JOURNAL, ...AFTER_JOURNAL, "clientInterrupted", "bytes", "contextTasks", "clientWaiting", "waiting"],
  args: [
    "livenessSeconds",
    "profileQuota",
    "contentHash",
    "taskId",
    "runId",
    "contextId",
    "clientId",
    "profile",
    "status",
    "message",
    "nowMs",
    "dedupSeconds",
    "metadata",
    "pushConfigId",
    "pushConfig",
    "clientMaxStoredBytes",
    "profileMaxStoredBytes",
    "clientMaxInterruptedTasks",
    "traceContext",
    "waitingMember",
    "waitingTtlMs",
    "clientMaxWaiting",
    "maxWaiting",
  ],
  decode(reply): AcceptReply {
    if (!Array.isArray(reply)) return { ok: false, code: codeMeaning("accept", ACCEPT_CODES, reply) };
    return { ok: true, created: replyNumber("accept", reply[0]) === 1, taskId: replyString("accept", reply[1]) };
  },
});
