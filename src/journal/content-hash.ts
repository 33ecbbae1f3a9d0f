// The fingerprint of a client's message for dedup: the same messageId with the same content is a retry.
import { createHash } from "node:crypto";

/**
 * Key order does not change the hash: objects are serialized with sorted keys, members whose value is undefined left
 * out. Built in one pass (no entry arrays per object): it runs for every accepted message. Its output is the dedup
 * records' format, which must not change between versions (a retry after an upgrade would be refused as other
 * content): `test/unit/journal/content-hash.test.ts` holds it to the first version's definition.
 */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ",";
      // (a hole stays empty, as Array.prototype.join leaves it)
      if (i in value) out += canonical(value[i]);
    }
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  let out = "{";
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(key)}:${canonical(member)}`;
  }
  return `${out}}`;
}

/** SHA-256 (base64url, 22 chars kept) of the canonical JSON of a message. */
export function contentHash(message: unknown): string {
  return createHash("sha256").update(canonical(message)).digest("base64url").slice(0, 22);
}
