// pushClaim-1.lua called by name: tasks whose next webhook delivery is due, claimed for one delivery worker.
import { defineScript, replyStrings } from "../scripts.ts";

export const PUSH_CLAIM = defineScript({
  name: "pushClaim",
  keys: ["pushReady"],
  args: ["max", "leaseMs"],
  /** The claimed task ids. */
  decode: (reply) => (reply === null ? [] : replyStrings("pushClaim", reply)),
});
