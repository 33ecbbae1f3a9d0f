// The echo handler's documented instructions parse as docs/handlers.md says.
import { expect, test } from "bun:test";
import { parseEcho, splitChunks } from "../../../src/actors/handlers/echo-instructions.ts";

test("plain text is answered as it is (trimmed)", () => {
  expect(parseEcho("  hello world ")).toEqual({ instructions: [], answer: "hello world" });
});

test("instructions are taken out of the answer, in order", () => {
  expect(parseEcho("[sleep 300] hi [chunks 20 5] there [input]")).toEqual({
    instructions: [{ kind: "sleep", ms: 300 }, { kind: "chunks", count: 20, delayMs: 5 }, { kind: "input" }],
    answer: "hi there",
  });
  expect(parseEcho("[auth][fail][crash][hang][progress][tool clock]x").instructions.map((i) => i.kind)).toEqual([
    "auth",
    "fail",
    "crash",
    "hang",
    "progress",
    "tool",
  ]);
  expect(parseEcho("[tool read_file]").instructions).toEqual([{ kind: "tool", name: "read_file" }]);
});

test("defaults and bounds", () => {
  expect(parseEcho("[sleep]").instructions).toEqual([{ kind: "sleep", ms: 1000 }]);
  expect(parseEcho("[sleep 99999999]").instructions).toEqual([{ kind: "sleep", ms: 3_600_000 }]);
  expect(parseEcho("[chunks]").instructions).toEqual([{ kind: "chunks", count: 10, delayMs: 0 }]);
  expect(parseEcho("[chunks 0]").instructions).toEqual([{ kind: "chunks", count: 1, delayMs: 0 }]);
  expect(parseEcho("[unknown] [sleep x]")).toEqual({
    instructions: [{ kind: "sleep", ms: 1000 }],
    answer: "[unknown]",
  });
});

test("splitChunks: nearly equal pieces that join to the text", () => {
  expect(splitChunks("abcdefg", 3)).toEqual(["abc", "de", "fg"]);
  expect(splitChunks("ab", 5)).toEqual(["a", "b"]);
  expect(splitChunks("", 3)).toEqual([""]);
  const chunks = splitChunks("the quick brown fox jumps over the lazy dog", 20);
  expect(chunks).toHaveLength(20);
  expect(chunks.join("")).toBe("the quick brown fox jumps over the lazy dog");
});
