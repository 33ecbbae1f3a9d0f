// leasePair-2.lua called by name: one member in two lease sets, both or neither (a stream's task and client sets, or
// a blocking request's client and installation sets outside a Cluster).
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of leasePair means (see the script's header). */
export const LEASE_PAIR_CODES = { 1: "held", [-1]: "firstFull", [-2]: "secondFull" } as const;

export const LEASE_PAIR = defineScript({
  name: "leasePair",
  keys: ["first", "second"],
  args: ["member", "ttlMs", "maxFirst", "maxSecond"],
  decode: (reply) => codeMeaning("leasePair", LEASE_PAIR_CODES, reply),
});
