// lease-1.lua called by name: one capacity lease shared by every gateway, taken or renewed under a maximum.
import { codeMeaning, defineScript } from "../scripts.ts";

/** What each reply of lease means (see the script's header). */
export const LEASE_CODES = { 1: "held", [-1]: "full", [-2]: "gone" } as const;

export const LEASE = defineScript({
  name: "lease",
  keys: ["leases"],
  args: ["member", "ttlMs", "max", "renewOnly"],
  decode: (reply) => codeMeaning("lease", LEASE_CODES, reply),
});
