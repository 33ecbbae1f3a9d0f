// rotateKey-1.lua called by name: a client's record takes a new API key's hash, keeping the replaced one or not.
import { codeMeaning, defineScript, replyString } from "../scripts.ts";

/** What each refusal of rotateKey means (see the script's header). */
export const ROTATE_KEY_CODES = { [-1]: "noSuchClient", [-2]: "revoked" } as const;

/** The hashes of the keys whose mappings the caller now ends: the replaced one, and one an earlier rotation kept. */
export interface RotatedHashes {
  replaced: string;
  /** "" when no earlier rotation's key was still kept. */
  givenUp: string;
}

export const ROTATE_KEY = defineScript({
  name: "rotateKey",
  keys: ["client"],
  args: ["keyHash", "keepReplaced"],
  decode: (reply): RotatedHashes | (typeof ROTATE_KEY_CODES)[keyof typeof ROTATE_KEY_CODES] =>
    Array.isArray(reply)
      ? { replaced: replyString("rotateKey", reply[0]), givenUp: replyString("rotateKey", reply[1]) }
      : codeMeaning("rotateKey", ROTATE_KEY_CODES, reply),
});
