// cancel-18.lua called by name: a client's task canceled at once, or its running actor asked to cancel it.
import { codeMeaning, defineScript, replyNumber } from "../scripts.ts";
import { TASK_STEP_KEYS } from "./transition.ts";

/** What the first element of cancel's list reply means. */
export const CANCEL_OUTCOMES = { 1: "canceled", 2: "requested", 0: "alreadyCanceled" } as const;

/** What each negative reply of cancel means (see the script's header). */
export const CANCEL_CODES = { [-1]: "notFound", [-2]: "notCancelable" } as const;

export type CancelReply =
  | { ok: true; outcome: (typeof CANCEL_OUTCOMES)[keyof typeof CANCEL_OUTCOMES]; rev: number }
  | { ok: false; code: (typeof CANCEL_CODES)[keyof typeof CANCEL_CODES] };

export const CANCEL = defineScript({
  name: "cancel",
  keys: [
    ...TASK_STEP_KEYS,
    "clientRunning",
    "clientInterrupted",
    "inputDue",
    "purge",
    "bytes",
    "clientDeferred",
    "deferred",
    "contextTasks",
    "taskStreams",
  ],
  args: [
    "clientId",
    "status",
    "event",
    "nowMs",
    "retentionSeconds",
    "journalRetentionSeconds",
    "eventsChannel",
    "cancelChannel",
  ],
  decode(reply): CancelReply {
    if (!Array.isArray(reply)) return { ok: false, code: codeMeaning("cancel", CANCEL_CODES, reply) };
    return {
      ok: true,
      outcome: codeMeaning("cancel", CANCEL_OUTCOMES, replyNumber("cancel", reply[0])),
      rev: replyNumber("cancel", reply[1]),
    };
  },
});
