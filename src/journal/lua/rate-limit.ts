// rateLimit-1.lua called by name: one request taken from a client's token bucket, shared by every gateway.
import { defineScript, replyNumber } from "../scripts.ts";

export const RATE_LIMIT = defineScript({
  name: "rateLimit",
  keys: ["bucket"],
  args: ["perSecond", "burst", "cost"],
  /** 0 taken; otherwise the milliseconds until `cost` tokens are there (nothing written). */
  decode: (reply) => replyNumber("rateLimit", reply),
});
