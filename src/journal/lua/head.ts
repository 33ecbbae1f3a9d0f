// head-2.lua called by name: a task's revision, state and client, and its journal cursor, read at one revision.
import { defineScript, replyStrings, UnexpectedScriptReplyError } from "../scripts.ts";

export const HEAD = defineScript({
  name: "head",
  keys: ["task", "journal"],
  args: [],
  /** The task's revision, state, client id and last journal entry id ("0-0" when none); undefined when no task. */
  decode(reply): { rev: number; state: string; clientId: string; cursor: string } | undefined {
    if (!Array.isArray(reply) || reply.length === 0) return undefined;
    const fields = replyStrings("head", reply);
    const [rev, state, clientId, cursor] = fields;
    if (fields.length !== 4 || rev === undefined || state === undefined || clientId === undefined || !cursor) {
      throw new UnexpectedScriptReplyError("head", reply);
    }
    return { rev: Number(rev), state, clientId, cursor };
  },
});
