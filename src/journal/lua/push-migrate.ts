// pushMigrate-5.lua called by name: a task's deliveries queued by a version before the queues per config, moved into
// its outbox.
import { defineScript, replyNumber } from "../scripts.ts";

export const PUSH_MIGRATE = defineScript({
  name: "pushMigrate",
  keys: ["legacyPushQueue", "pushOutbox", "pushReady", "task", "bytes"],
  args: ["taskId"],
  /** How many deliveries were moved. */
  decode: (reply) => replyNumber("pushMigrate", reply),
});
