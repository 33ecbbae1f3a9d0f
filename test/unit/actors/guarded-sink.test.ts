// The full-text gate in the actor: content is held and only progress counts are written, coalesced; on pass each
// artifact is written whole in one event; a failing, throwing, hanging or aborted check writes no content at all.
import { expect, test } from "bun:test";
import { GuardedSink, PROGRESS_METADATA_KEY } from "../../../src/actors/guarded-sink.ts";
import { CONTENT_CHECK_FAILED, ContentCheckFailure } from "../../../src/actors/output-check.ts";
import {
  composeGuardrails,
  denyPatternsGuardrail,
  type Guardrail,
  maxLengthGuardrail,
} from "../../../src/guardrail/index.ts";
import type { Artifact } from "../../../src/protocol/index.ts";
import { profileOf, recorder } from "./sink-fixtures.ts";

const profile = profileOf({ guardrails: { denyPatterns: ["forbidden"] } });
const deny = denyPatternsGuardrail(["forbidden"]);
const TEXT = { artifactId: "response-1", name: "response" };
const COMPLETED = { state: "TASK_STATE_COMPLETED" } as const;
const report: Artifact = { artifactId: "report", parts: [{ data: { total: 3 } }] };

function gate(
  guardrail: Guardrail | undefined,
  options: { signal?: AbortSignal; intervalMs?: number; profile?: typeof profile } = {},
) {
  const { target, writes } = recorder();
  const warnings: string[] = [];
  const logger = { warn: (fields: { reason: string }) => warnings.push(fields.reason) } as never;
  const sink = new GuardedSink(target, {
    profile: options.profile ?? profile,
    textArtifact: TEXT,
    guardrail,
    signal: options.signal ?? new AbortController().signal,
    logger,
    progressIntervalMs: options.intervalMs ?? 60_000,
  });
  return { sink, writes, warnings };
}

const progress = (characters: number, artifacts: number) => ({
  status: "TASK_STATE_WORKING",
  metadata: { [PROGRESS_METADATA_KEY]: { characters, artifacts } },
});

test("held output: one progress count, then on pass each artifact whole in one event, in emission order", async () => {
  const { sink, writes } = gate(deny);
  await sink.artifact(report);
  await sink.text("Hello, ");
  await sink.progress("looking up the weather in Paris", { city: "Paris" });
  await sink.text("wörld 🌍");
  expect(writes).toEqual([progress(0, 1)]); // the first emit reports at once; the rest wait for the interval
  await sink.finish(COMPLETED);
  expect(writes).toEqual([
    progress(0, 1),
    { artifact: report, lastChunk: true },
    { artifact: { ...TEXT, parts: [{ text: "Hello, wörld 🌍" }] }, lastChunk: true },
    { status: "TASK_STATE_COMPLETED" },
  ]);
  expect(JSON.stringify(writes.slice(0, 1))).not.toContain("Paris");
});

test("progress is coalesced: at most one event per interval, a trailing one carries the latest counts", async () => {
  const { sink, writes } = gate(deny, { intervalMs: 80 });
  for (let i = 0; i < 20; i++) await sink.text("ab");
  expect(writes).toEqual([progress(2, 0)]);
  await Bun.sleep(120);
  expect(writes).toEqual([progress(2, 0), progress(40, 0)]);
  await Bun.sleep(120); // nothing new: no event
  expect(writes).toHaveLength(2);
  await sink.text("c");
  expect(writes).toEqual([progress(2, 0), progress(40, 0), progress(41, 0)]);
  await sink.text("d");
  await sink.finish(COMPLETED); // finish stops the trailing event
  await Bun.sleep(120);
  expect(writes.filter((w) => "status" in w && w.status === "TASK_STATE_WORKING")).toHaveLength(3);
});

test("a failed check writes no content: FAILED comes from a ContentCheckFailure, the reason only in the log", async () => {
  const { sink, writes, warnings } = gate(deny);
  await sink.text("this is ");
  await sink.text("forbidden");
  await sink.artifact(report);
  const error = await sink.finish(COMPLETED).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ContentCheckFailure);
  expect((error as Error).message).toBe(CONTENT_CHECK_FAILED);
  expect(writes).toEqual([progress(8, 0)]);
  expect(warnings).toEqual(["matched deny pattern 0 (literal)"]);
});

test("a guardrail that throws, rejects, answers no verdict or hangs past its timeout fails; nothing is written", async () => {
  const throwing: Guardrail = {
    name: "throws",
    check: () => {
      throw new Error("boom");
    },
  };
  const rejecting: Guardrail = { name: "rejects", check: () => Promise.reject(new Error("no")) };
  const junk = { name: "junk", check: async () => ({ pass: "yes" }) } as unknown as Guardrail;
  const hanging: Guardrail = { name: "hangs", check: () => new Promise(() => {}) };
  for (const guardrail of [throwing, rejecting, junk, composeGuardrails([hanging], { timeoutMs: 50 })]) {
    const { sink, writes } = gate(guardrail);
    await sink.text("an answer");
    expect(await sink.finish(COMPLETED).catch((e: unknown) => e)).toBeInstanceOf(ContentCheckFailure);
    expect(writes).toEqual([progress(9, 0)]);
  }
});

test("an interrupt's question is content: checked with the output, written after it, kept in the history", async () => {
  const asked = gate(deny);
  await asked.sink.text("so far");
  await asked.sink.finish({ state: "TASK_STATE_INPUT_REQUIRED", message: "Which city?" });
  expect(asked.writes.slice(1)).toEqual([
    { artifact: { ...TEXT, parts: [{ text: "so far" }] }, lastChunk: true },
    { status: "TASK_STATE_INPUT_REQUIRED", text: "Which city?", history: true },
  ]);
  const refused = gate(deny);
  await refused.sink.text("so far");
  const error = await refused.sink
    .finish({ state: "TASK_STATE_AUTH_REQUIRED", message: "Log in to the forbidden zone" })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ContentCheckFailure);
  expect(refused.writes).toEqual([progress(6, 0)]);
});

test("after an abort nothing held is written: emits are dropped, finish throws without writing", async () => {
  const controller = new AbortController();
  const { sink, writes } = gate(undefined, { signal: controller.signal, intervalMs: 30 });
  await sink.text("a");
  await sink.text("b"); // schedules a trailing progress event
  controller.abort(new Error("canceled"));
  await sink.text("c");
  await Bun.sleep(60);
  expect(await sink.finish(COMPLETED).catch((e: unknown) => (e as Error).message)).toBe("canceled");
  expect(writes).toEqual([progress(1, 0)]);
});

test("fullTextCheck required without a guardrail holds and releases unchecked; empty output is not checked", async () => {
  const { sink, writes } = gate(undefined);
  await sink.text("whole");
  await sink.finish(COMPLETED);
  expect(writes.slice(1)).toEqual([
    { artifact: { ...TEXT, parts: [{ text: "whole" }] }, lastChunk: true },
    { status: "TASK_STATE_COMPLETED" },
  ]);
  const never: Guardrail = { name: "never", check: async () => ({ pass: false, reason: "no" }) };
  const empty = gate(never);
  await empty.sink.finish(COMPLETED);
  expect(empty.writes).toEqual([{ status: "TASK_STATE_COMPLETED" }]);
});

test("a later artifact with the same id replaces the held one; the text artifact keeps its first place", async () => {
  const { sink, writes } = gate(deny);
  await sink.text("a");
  await sink.artifact({ artifactId: "x", parts: [{ text: "old" }] });
  await sink.text("b");
  await sink.artifact({ artifactId: "x", parts: [{ text: "new" }] });
  await sink.finish(COMPLETED);
  expect(writes.slice(1, 3)).toEqual([
    { artifact: { ...TEXT, parts: [{ text: "ab" }] }, lastChunk: true },
    { artifact: { artifactId: "x", parts: [{ text: "new" }] }, lastChunk: true },
  ]);
});

test("a handler failure's message is shown only when it passes the check", async () => {
  const { sink } = gate(deny);
  expect(await sink.failureMessage("The lookup service is down")).toBe("The lookup service is down");
  expect(await sink.failureMessage("The forbidden answer was 42")).toBe(CONTENT_CHECK_FAILED);
  expect(await sink.failureMessage(CONTENT_CHECK_FAILED)).toBe(CONTENT_CHECK_FAILED);
});

test("text past guardrails.maxLength is refused as it comes: nothing held is written, later emits and finish fail", async () => {
  const limited = profileOf({ guardrails: { maxLength: 10 } });
  const { sink, writes, warnings } = gate(maxLengthGuardrail(10), { profile: limited });
  await sink.artifact(report);
  await sink.text("ωωωωω"); // 5 code points
  await sink.text("ωωωωω"); // 10: exactly the limit passes
  const crossing = await sink.text("ω").catch((e: unknown) => e);
  expect(crossing).toBeInstanceOf(ContentCheckFailure);
  expect((crossing as Error).message).toBe(CONTENT_CHECK_FAILED);
  expect(warnings).toEqual(["max-length: the text passed 10 characters while it was produced"]);
  expect(await sink.text("more").catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.artifact(report).catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.progress("still going").catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.finish(COMPLETED).catch((e: unknown) => e)).toBe(crossing);
  expect(await sink.failureMessage(CONTENT_CHECK_FAILED)).toBe(CONTENT_CHECK_FAILED);
  expect(writes).toEqual([progress(0, 1)]); // the first emit's progress count; no content, no closing status
  expect(warnings).toHaveLength(1);
});

test("without maxLength any amount of text is held; at the limit exactly the output passes and is written", async () => {
  const unlimited = gate(deny);
  await unlimited.sink.text("ω".repeat(100_000));
  await unlimited.sink.finish(COMPLETED);
  expect(unlimited.writes[1]).toEqual({
    artifact: { ...TEXT, parts: [{ text: "ω".repeat(100_000) }] },
    lastChunk: true,
  });
  const limited = profileOf({ guardrails: { maxLength: 3 } });
  const exact = gate(maxLengthGuardrail(3), { profile: limited });
  await exact.sink.text("🌍🌍🌍"); // three code points, six UTF-16 units
  await exact.sink.finish(COMPLETED);
  expect(exact.writes.slice(1)).toEqual([
    { artifact: { ...TEXT, parts: [{ text: "🌍🌍🌍" }] }, lastChunk: true },
    { status: "TASK_STATE_COMPLETED" },
  ]);
});
