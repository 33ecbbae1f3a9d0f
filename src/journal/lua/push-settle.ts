// pushSettle-6.lua called by name: the head delivery of a task's webhook queue settled after one attempt.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of pushSettle means (see the script's header). */
export const PUSH_SETTLE_CODES = { 1: "settled", 0: "headChanged" } as const;

export const PUSH_SETTLE = defineScript({
  name: "pushSettle",
  keys: ["pushOutbox", "pushReady", "pushDead", "pushConfigs", "task", "bytes"],
  args: ["taskId", "deliveryId", "outcome", "retried", "retryAtMs", "reason", "configId", "rev", "deadMaxLength"],
  decode: (reply) => codeMeaning("pushSettle", PUSH_SETTLE_CODES, reply),
});
