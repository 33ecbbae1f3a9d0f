// contentHash: the dedup fingerprint of a message is independent of key order and changes with any content.

import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { contentHash } from "../../../src/journal/index.ts";

const message = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }], metadata: { a: 1, b: [1, 2] } };

test("key order and undefined fields do not change the hash", () => {
  const reordered = { parts: [{ text: "hi" }], metadata: { b: [1, 2], a: 1 }, role: "ROLE_USER", messageId: "m1" };
  expect(contentHash(reordered)).toBe(contentHash(message));
  expect(contentHash({ ...message, contextId: undefined })).toBe(contentHash(message));
});

test("any change of content changes the hash", () => {
  const variants = [
    { ...message, parts: [{ text: "hi!" }] },
    { ...message, role: "ROLE_AGENT" },
    { ...message, metadata: { a: 1, b: [2, 1] } },
    { ...message, contextId: "c1" },
    { ...message, parts: [{ text: "hi" }, { text: "" }] },
  ];
  const hashes = new Set([contentHash(message), ...variants.map(contentHash)]);
  expect(hashes.size).toBe(variants.length + 1);
});

test("is 22 base64url characters with no ':' (the dedup record separates hash and task id with ':')", () => {
  for (const value of [message, {}, [], "x", null]) expect(contentHash(value)).toMatch(/^[A-Za-z0-9_-]{22}$/);
});

/**
 * The canonical form as the first version defined it. Dedup records written by one version are read by the next (a
 * retry after an upgrade must hash the same), so the form may be computed differently but never change.
 */
function firstCanonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(firstCanonical).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${firstCanonical(v)}`).join(",")}}`;
}

const firstHash = (value: unknown) =>
  createHash("sha256").update(firstCanonical(value)).digest("base64url").slice(0, 22);

/** A pseudo-random JSON-like value (seeded): nested objects and arrays, escapes, non-ASCII keys, undefined members. */
function randomValue(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 3 ? 6 : 9));
  const text = () => ["", "a", "hé", "\u2028", '"q"\\', "10", "2", "Ω", "\ud83d\ude00", "b"][Math.floor(next() * 10)];
  switch (pick) {
    case 0:
      return null;
    case 1:
      return next() < 0.5;
    case 2:
      return [0, -0, 1.5, -3, 1e21, 2 ** 53, 1e-7][Math.floor(next() * 7)];
    case 3:
    case 4:
      return text();
    case 5:
      return undefined;
    case 6:
      return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(next() * 5); i > 0; i--) object[`${text()}${i}`] = randomValue(next, depth + 1);
      return object;
    }
  }
}

test("the hash is the first version's for every shape of message (dedup records outlive a version)", () => {
  let seed = 42;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const holes = [1, 2, 3];
  delete holes[1];
  const values = [
    message,
    holes,
    { a: [undefined, holes] },
    ...Array.from({ length: 2000 }, () => randomValue(next, 0)),
  ];
  for (const value of values) expect(contentHash(value)).toBe(firstHash(value));
});
