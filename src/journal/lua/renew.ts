// renew-2.lua called by name: the holder of a run's fencing token keeps its lease.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of renew means (see the script's header). */
export const RENEW_CODES = { 0: "ok", 1: "cancel", [-1]: "lost" } as const;

export const RENEW = defineScript({
  name: "renew",
  keys: ["run", "queue"],
  args: ["fence", "leaseMs", "group", "consumer", "entryId"],
  decode: (reply) => codeMeaning("renew", RENEW_CODES, reply),
});
