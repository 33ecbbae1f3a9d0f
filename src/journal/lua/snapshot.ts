// snapshot-3.lua called by name: a task and its journal cursor read at one revision.
import { defineScript, replyString, replyStrings } from "../scripts.ts";
import type { StoredTask } from "../task-view.ts";

export const SNAPSHOT = defineScript({
  name: "snapshot",
  keys: ["task", "journal", "chunks"],
  args: [],
  /**
   * The task as stored (its caller, which knows the task's id, decodes it) and the id of its last journal entry
   * ("0-0" when none); undefined when there is no such task.
   */
  decode(reply): { stored: StoredTask; cursor: string } | undefined {
    if (!Array.isArray(reply) || reply.length === 0) return undefined;
    const [fields, cursor, chunks] = reply;
    return {
      stored: {
        fields: replyStrings("snapshot", fields),
        chunks: chunks === undefined ? undefined : replyString("snapshot", chunks),
      },
      cursor: replyString("snapshot", cursor),
    };
  },
});
