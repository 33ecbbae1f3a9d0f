// expireInput-13.lua called by name: an interrupted task whose input timeout has passed ends FAILED.
import { codeMeaning, defineScript, replyNumber } from "../scripts.ts";

/** What each non-list reply of expireInput means (see the script's header). */
export const EXPIRE_INPUT_CODES = { 0: "stale", [-1]: "notScheduled", [-2]: "notDue", [-3]: "otherClient" } as const;

export const EXPIRE_INPUT = defineScript({
  name: "expireInput",
  keys: [
    "inputDue",
    "task",
    "run",
    "journal",
    "clientTasks",
    "clientInterrupted",
    "purge",
    "bytes",
    "pushConfigs",
    "pushOutbox",
    "pushReady",
    "contextTasks",
    "taskStreams",
  ],
  args: [
    "taskId",
    "clientId",
    "status",
    "event",
    "nowMs",
    "retentionSeconds",
    "journalRetentionSeconds",
    "eventsChannel",
  ],
  /** The failed task's revision, or why nothing failed. */
  decode: (reply) =>
    Array.isArray(reply)
      ? { ok: true as const, rev: replyNumber("expireInput", reply[1]) }
      : { ok: false as const, code: codeMeaning("expireInput", EXPIRE_INPUT_CODES, reply) },
});
