// contentHash: the dedup fingerprint of a message is independent of key order and changes with any content.
import { expect, test } from "bun:test";
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
