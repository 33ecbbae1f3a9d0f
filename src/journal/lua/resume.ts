// resume-17.lua called by name: an interrupted task takes the client's follow-up and its run is queued again, or a
// refusal that wrote nothing.
import { codeMeaning, defineScript, replyNumber, replyString, replyStrings } from "../scripts.ts";
import { ADMISSION_KEYS } from "./accept.ts";

/** What each negative reply of resume means (see the script's header). */
export const RESUME_CODES = {
  [-1]: "worker",
  [-2]: "clientTasks",
  [-3]: "profileQuota",
  [-4]: "messageIdReused",
  [-5]: "unknownClient",
  [-6]: "taskNotFound",
  [-7]: "terminal",
  [-8]: "notInterrupted",
  [-9]: "pushConfigLimit",
  [-10]: "clientStorage",
  [-11]: "profileStorage",
  [-12]: "otherContext",
  [-13]: "historyLimit",
} as const;

export type ResumeReply =
  /** `fields`: the task after the write (HGETALL, flat), when the call asked for it. */
  | { ok: true; created: boolean; taskId: string; fields?: string[] | undefined }
  | { ok: false; code: (typeof RESUME_CODES)[keyof typeof RESUME_CODES] };

export const RESUME = defineScript({
  name: "resume",
  keys: [...ADMISSION_KEYS, "pushOutbox", "pushReady", "clientInterrupted", "inputDue", "bytes", "contextTasks"],
  args: [
    "livenessSeconds",
    "profileQuota",
    "contentHash",
    "taskId",
    "clientId",
    "message",
    "status",
    "withTask",
    "nowMs",
    "dedupSeconds",
    "eventsChannel",
    "profile",
    "pushConfigId",
    "pushConfig",
    "maxPushConfigsPerTask",
    "clientMaxStoredBytes",
    "profileMaxStoredBytes",
    "contextId",
    "traceContext",
    "maxHistoryBytes",
  ],
  decode(reply): ResumeReply {
    if (!Array.isArray(reply)) return { ok: false, code: codeMeaning("resume", RESUME_CODES, reply) };
    return {
      ok: true,
      created: replyNumber("resume", reply[0]) === 1,
      taskId: replyString("resume", reply[1]),
      fields: reply[3] === undefined ? undefined : replyStrings("resume", reply[3]),
    };
  },
});
