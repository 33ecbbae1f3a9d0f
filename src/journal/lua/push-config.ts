// pushConfig-4.lua called by name: a push notification config stored within the task's and the budgets' limits.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of pushConfig means (see the script's header). */
export const PUSH_CONFIG_CODES = {
  1: "stored",
  [-1]: "taskNotFound",
  [-2]: "configLimit",
  [-3]: "clientStorage",
  [-4]: "profileStorage",
} as const;

export const PUSH_CONFIG = defineScript({
  name: "pushConfig",
  keys: ["task", "pushConfigs", "client", "bytes"],
  args: ["clientId", "profile", "configId", "config", "maxPerTask", "clientMaxStoredBytes", "profileMaxStoredBytes"],
  decode: (reply) => codeMeaning("pushConfig", PUSH_CONFIG_CODES, reply),
});
