// release-3.lua called by name: a running run handed back to the queue without counting the try.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each negative reply of release means (see the script's header). */
export const RELEASE_CODES = { [-1]: "stale" } as const;

export const RELEASE = defineScript({
  name: "release",
  keys: ["run", "queue", "clientRunning"],
  args: ["fence", "group", "entryId"],
  /** The new queue entry id, or "stale". */
  decode: (reply) =>
    typeof reply === "string"
      ? { ok: true as const, entryId: reply }
      : { ok: false as const, code: codeMeaning("release", RELEASE_CODES, reply) },
});
