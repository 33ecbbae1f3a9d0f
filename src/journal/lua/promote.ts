// promote-7.lua called by name: a client's deferred run queued again once the client has a free running slot.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each non-string reply of promote means (see the script's header). */
export const PROMOTE_CODES = { 0: "notDeferred", [-1]: "notAmongDeferred", [-2]: "noFreeSlot" } as const;

export const PROMOTE = defineScript({
  name: "promote",
  keys: ["client", "clientRunning", "clientDeferred", "deferred", "queue", "run", "task"],
  args: ["taskId", "clientId", "clientMaxRunningTasks"],
  /** The new queue entry id, or why the run was not queued. */
  decode: (reply) =>
    typeof reply === "string"
      ? { ok: true as const, entryId: reply }
      : { ok: false as const, code: codeMeaning("promote", PROMOTE_CODES, reply) },
});
