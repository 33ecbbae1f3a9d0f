// The output gate's journal sink: one text artifact per leg with append/lastChunk as A2A defines them, whole
// artifacts and progress in call order; and how artifact events change the stored list.
import { expect, test } from "bun:test";
import { JournalSink, type OutputTarget } from "../../../src/actors/emit-gate.ts";
import { applyArtifact } from "../../../src/journal/index.ts";
import type { Artifact } from "../../../src/protocol/index.ts";

type Write =
  | { artifact: Artifact; append?: boolean; lastChunk?: boolean }
  | { status: string; text: string | undefined; history?: boolean };

function recorder(): { target: OutputTarget; writes: Write[] } {
  const writes: Write[] = [];
  const target: OutputTarget = {
    async artifact(artifact, options = {}) {
      writes.push({ artifact, ...options });
    },
    async status(state, options = {}) {
      writes.push({ status: state, text: options.text, ...(options.history ? { history: true } : {}) });
    },
  };
  return { target, writes };
}

const COMPLETED = { state: "TASK_STATE_COMPLETED" } as const;
const done = { status: "TASK_STATE_COMPLETED", text: undefined };
const chunk = (text: string) => ({ artifactId: "response-1", name: "response", parts: [{ text }] });

test("text deltas: first chunk without append, then append, the last one with lastChunk", async () => {
  const { target, writes } = recorder();
  const sink = new JournalSink(target, "response-1");
  await sink.text("a");
  await sink.text("");
  await sink.text("b");
  await sink.text("c");
  expect(writes).toHaveLength(2); // the newest delta is held until the next one or the end
  await sink.finish(COMPLETED);
  expect(writes).toEqual([
    { artifact: chunk("a"), append: false, lastChunk: false },
    { artifact: chunk("b"), append: true, lastChunk: false },
    { artifact: chunk("c"), append: true, lastChunk: true },
    done,
  ]);
});

test("a single answer is one event, complete at once", async () => {
  const { target, writes } = recorder();
  const sink = new JournalSink(target, "response-1");
  await sink.text("whole");
  await sink.finish(COMPLETED);
  expect(writes).toEqual([{ artifact: chunk("whole"), append: false, lastChunk: true }, done]);
});

test("progress and artifacts flush held text first; a closed-early artifact ends with an empty last chunk", async () => {
  const { target, writes } = recorder();
  const sink = new JournalSink(target, "response-1");
  const report: Artifact = { artifactId: "report", parts: [{ data: { ok: true } }] };
  await sink.text("thinking");
  await sink.progress("looking it up");
  await sink.artifact(report);
  await sink.finish(COMPLETED);
  expect(writes).toEqual([
    { artifact: chunk("thinking"), append: false, lastChunk: false },
    { status: "TASK_STATE_WORKING", text: "looking it up" },
    { artifact: report, lastChunk: true },
    { artifact: chunk(""), append: true, lastChunk: true },
    done,
  ]);
});

test("no output: finish writes only the closing status; an interrupt's question goes to the status and history", async () => {
  const { target, writes } = recorder();
  await new JournalSink(target, "response-1").finish(COMPLETED);
  const sink = new JournalSink(target, "response-2");
  await sink.text("so far");
  await sink.finish({ state: "TASK_STATE_INPUT_REQUIRED", message: "Which city?" });
  expect(writes).toEqual([
    done,
    { artifact: { ...chunk("so far"), artifactId: "response-2" }, append: false, lastChunk: true },
    { status: "TASK_STATE_INPUT_REQUIRED", text: "Which city?", history: true },
  ]);
});

test("applyArtifact: add, replace by id, append text to the last text part", () => {
  const a1 = chunk("Hel");
  let list = applyArtifact([], a1, false);
  expect(list).toEqual([a1]);
  list = applyArtifact(list, chunk("lo"), true);
  expect(list).toEqual([chunk("Hello")]);
  const other: Artifact = { artifactId: "x", parts: [{ data: 1 }] };
  list = applyArtifact(list, other, false);
  list = applyArtifact(list, chunk("again"), false); // a retried leg replaces its partial text
  expect(list).toEqual([chunk("again"), other]);
  list = applyArtifact(list, { artifactId: "x", parts: [{ text: "t" }] }, true);
  expect(list[1]).toEqual({ artifactId: "x", parts: [{ data: 1 }, { text: "t" }] });
});
