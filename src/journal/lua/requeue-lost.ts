// requeueLost-3.lua called by name: a run whose queue entry is gone gets a new one.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each negative reply of requeueLost means (see the script's header). */
export const REQUEUE_LOST_CODES = {
  [-1]: "missing",
  [-2]: "not-queued",
  [-3]: "leased",
  [-4]: "entry-present",
} as const;

export const REQUEUE_LOST = defineScript({
  name: "requeueLost",
  keys: ["run", "queue", "clientRunning"],
  args: ["group"],
  /** The new queue entry id, or why the run was left alone. */
  decode: (reply) =>
    typeof reply === "string"
      ? { ok: true as const, entryId: reply }
      : { ok: false as const, code: codeMeaning("requeueLost", REQUEUE_LOST_CODES, reply) },
});
