// pushHead-3.lua called by name: the head delivery of a claimed webhook queue, with its config.
import { defineScript, replyString, UnexpectedScriptReplyError } from "../scripts.ts";

/** The head delivery's JSON and its config's (null: the config was deleted meanwhile); null: the queue is empty. */
export type PushHeadReply = { delivery: string; config: string | null } | null;

export const PUSH_HEAD = defineScript({
  name: "pushHead",
  keys: ["pushOutbox", "pushConfigs", "pushReady"],
  args: ["taskId", "configId"],
  decode(reply): PushHeadReply {
    if (reply === null) return null;
    if (!Array.isArray(reply)) throw new UnexpectedScriptReplyError("pushHead", reply);
    const [delivery, config = null] = reply;
    return {
      delivery: replyString("pushHead", delivery),
      config: config === null ? null : replyString("pushHead", config),
    };
  },
});
