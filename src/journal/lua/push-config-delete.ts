// pushConfigDelete-3.lua called by name: a push notification config deleted and its bytes given back.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of pushConfigDelete means (see the script's header). */
export const PUSH_CONFIG_DELETE_CODES = { 1: "deleted", 0: "noSuchConfig", [-1]: "taskNotFound" } as const;

export const PUSH_CONFIG_DELETE = defineScript({
  name: "pushConfigDelete",
  keys: ["task", "pushConfigs", "bytes"],
  args: ["clientId", "profile", "configId"],
  decode: (reply) => codeMeaning("pushConfigDelete", PUSH_CONFIG_DELETE_CODES, reply),
});
