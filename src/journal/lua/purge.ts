// purge-12.lua called by name: one deletion step of a finished task whose time has come.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of purge means (see the script's header). */
export const PURGE_CODES = {
  2: "taskDeleted",
  1: "journalDeleted",
  0: "stale",
  [-1]: "notScheduled",
  [-2]: "notDue",
  [-3]: "otherClient",
} as const;

export const PURGE = defineScript({
  name: "purge",
  keys: [
    "purge",
    "task",
    "run",
    "journal",
    "pushConfigs",
    "pushOutbox",
    "pushReady",
    "clientTasks",
    "bytes",
    "contextTasks",
    "chunks",
    "legacyPushQueue",
  ],
  args: ["taskId", "clientId"],
  decode: (reply) => codeMeaning("purge", PURGE_CODES, reply),
});
