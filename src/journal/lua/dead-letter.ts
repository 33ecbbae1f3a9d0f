// deadLetter-2.lua called by name: a queue entry moved to the dead-letter stream with its reason.
import { defineScript, replyString } from "../scripts.ts";

export const DEAD_LETTER = defineScript({
  name: "deadLetter",
  keys: ["queue", "dead"],
  args: ["group", "entryId", "runId", "taskId", "reason", "maxLength"],
  /** The dead-letter entry id. */
  decode: (reply) => replyString("deadLetter", reply),
});
