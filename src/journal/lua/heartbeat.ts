// heartbeat-1.lua called by name: a worker's liveness beat in Redis's clock.
import { defineScript, replyNumber } from "../scripts.ts";

export const HEARTBEAT = defineScript({
  name: "heartbeat",
  keys: ["live"],
  args: ["ttlSeconds"],
  /** The Redis time (s) recorded. */
  decode: (reply) => replyNumber("heartbeat", reply),
});
