// The fingerprint of a client's message for dedup: the same messageId with the same content is a retry.
import { createHash } from "node:crypto";

/** Key order does not change the hash: objects are serialized with sorted keys. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
}

/** SHA-256 (base64url, 22 chars kept) of the canonical JSON of a message. */
export function contentHash(message: unknown): string {
  return createHash("sha256").update(canonical(message)).digest("base64url").slice(0, 22);
}
