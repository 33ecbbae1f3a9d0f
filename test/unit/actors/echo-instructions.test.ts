// The echo and faults handlers' documented instructions parse as docs/handlers.md says, and echo's limits hold.
import { expect, test } from "bun:test";
import {
  echoLimitProblem,
  parseEcho,
  parseFaults,
  splitChunks,
} from "../../../src/actors/handlers/echo-instructions.ts";

test("plain text is answered as it is (trimmed)", () => {
  expect(parseEcho("  hello world ")).toEqual({ instructions: [], answer: "hello world" });
});

test("instructions are taken out of the answer, in order", () => {
  expect(parseEcho("[sleep 300] hi [chunks 20 5] there [input]")).toEqual({
    instructions: [{ kind: "sleep", ms: 300 }, { kind: "chunks", count: 20, delayMs: 5 }, { kind: "input" }],
    answer: "hi there",
  });
  expect(parseEcho("[auth][fail][progress][tool clock]x").instructions.map((i) => i.kind)).toEqual([
    "auth",
    "fail",
    "progress",
    "tool",
  ]);
  expect(parseEcho("[tool read_file]").instructions).toEqual([{ kind: "tool", name: "read_file" }]);
});

test("echo does not know [crash] or [hang]: they stay in its answer; faults obeys them", () => {
  expect(parseEcho("[crash] boom [hang]")).toEqual({ instructions: [], answer: "[crash] boom [hang]" });
  expect(parseFaults("[crash] boom [hang] [sleep 5]")).toEqual({
    instructions: [{ kind: "crash" }, { kind: "hang" }, { kind: "sleep", ms: 5 }],
    answer: "boom",
  });
});

test("defaults; echo keeps the numbers as asked, faults lowers them to its bounds", () => {
  expect(parseEcho("[sleep]").instructions).toEqual([{ kind: "sleep", ms: 1000 }]);
  expect(parseEcho("[sleep 99999999]").instructions).toEqual([{ kind: "sleep", ms: 99_999_999 }]);
  expect(parseFaults("[sleep 99999999]").instructions).toEqual([{ kind: "sleep", ms: 3_600_000 }]);
  expect(parseFaults("[chunks 99999 99999]").instructions).toEqual([
    { kind: "chunks", count: 10_000, delayMs: 60_000 },
  ]);
  expect(parseEcho("[chunks]").instructions).toEqual([{ kind: "chunks", count: 10, delayMs: 0 }]);
  expect(parseEcho("[chunks 0]").instructions).toEqual([{ kind: "chunks", count: 1, delayMs: 0 }]);
  expect(parseEcho("[sleep 1e400]").instructions).toEqual([{ kind: "sleep", ms: 1000 }]);
  expect(parseEcho("[unknown] [sleep x]")).toEqual({
    instructions: [{ kind: "sleep", ms: 1000 }],
    answer: "[unknown]",
  });
});

test("echo's limits: 10,000 ms of sleeps and chunk delays in all, 100 chunks", () => {
  expect(echoLimitProblem(parseEcho("[sleep 10000] [chunks 100] x"))).toBeUndefined();
  expect(echoLimitProblem(parseEcho("[sleep 4000] [chunks 4 2000] x"))).toBeUndefined();
  expect(echoLimitProblem(parseEcho("[sleep 10001] x"))).toBe(
    "Echo waits at most 10000 ms in all, sleeps and chunk delays together (asked for 10001 ms)",
  );
  expect(echoLimitProblem(parseEcho("[sleep 4000] [chunks 4 2001] x"))).toContain("(asked for 10003 ms)");
  expect(
    echoLimitProblem(parseEcho("[sleep][sleep][sleep][sleep][sleep][sleep][sleep][sleep][sleep][sleep][sleep]")),
  ).toContain("(asked for 11000 ms)");
  expect(echoLimitProblem(parseEcho("[chunks 101] x"))).toBe("Echo sends at most 100 chunks (asked for 101)");
  // Only the first [chunks] shapes the answer, so only it counts.
  expect(echoLimitProblem(parseEcho("[chunks 2] [chunks 10000 10000] x"))).toBeUndefined();
});

test("splitChunks: nearly equal pieces that join to the text", () => {
  expect(splitChunks("abcdefg", 3)).toEqual(["abc", "de", "fg"]);
  expect(splitChunks("ab", 5)).toEqual(["a", "b"]);
  expect(splitChunks("", 3)).toEqual([""]);
  const chunks = splitChunks("the quick brown fox jumps over the lazy dog", 20);
  expect(chunks).toHaveLength(20);
  expect(chunks.join("")).toBe("the quick brown fox jumps over the lazy dog");
});
