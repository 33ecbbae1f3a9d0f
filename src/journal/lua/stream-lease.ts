// streamLease-2.lua called by name: one SSE stream's leases in its task's and its client's sets, both or neither.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of streamLease means (see the script's header). */
export const STREAM_LEASE_CODES = { 1: "held", [-1]: "taskFull", [-2]: "clientFull" } as const;

export const STREAM_LEASE = defineScript({
  name: "streamLease",
  keys: ["taskStreams", "clientStreams"],
  args: ["member", "ttlMs", "maxPerTask", "maxPerClient"],
  decode: (reply) => codeMeaning("streamLease", STREAM_LEASE_CODES, reply),
});
