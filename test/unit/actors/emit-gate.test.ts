// The output gate's journal sink: one text artifact per leg with append/lastChunk as A2A defines them, whole
// artifacts and progress in call order; and how artifact events change the stored list.
import { expect, test } from "bun:test";
import { JournalSink, type OutputTarget } from "../../../src/actors/emit-gate.ts";
import { ArtifactList, applyArtifact, assembleArtifacts } from "../../../src/journal/index.ts";
import type { Artifact, Part } from "../../../src/protocol/index.ts";

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

/** The model: A2A's artifact events applied with a fresh copy of everything at each event. */
function modelApply(list: readonly Artifact[], artifact: Artifact, append: boolean): Artifact[] {
  const at = list.findIndex((item) => item.artifactId === artifact.artifactId);
  if (at < 0) return [...list, artifact];
  if (!append) return list.map((item, i) => (i === at ? artifact : item));
  const parts: Part[] = structuredClone(list[at]!.parts);
  for (const part of artifact.parts) {
    const last = parts.at(-1);
    const joined = last && typeof last.text === "string" && typeof part.text === "string";
    if (joined) parts[parts.length - 1] = { text: `${last.text}${part.text}` };
    else parts.push(part);
  }
  return list.map((item, i) => (i === at ? { ...item, parts } : item));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

test("ArtifactList and assembleArtifacts apply seeded event sequences as the model does, changing no caller's artifact", () => {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  for (let round = 0; round < 200; round++) {
    const initial = deepFreeze(
      Array.from({ length: random(3) }, (_, i): Artifact => ({ artifactId: `a${i}`, parts: [{ text: `i${i}` }] })),
    );
    const events = Array.from({ length: 1 + random(40) }, (_, i) => {
      const parts: Part[] = Array.from({ length: random(3) }, (_, k) =>
        random(2) === 0 ? { text: `t${i}.${k}` } : { data: { row: i, k } },
      );
      const artifact: Artifact = { artifactId: `a${random(4)}`, name: `n${random(2)}`, parts };
      return deepFreeze({ artifact, append: random(3) > 0 });
    });
    const expected = events.reduce<Artifact[]>((list, e) => modelApply(list, e.artifact, e.append), [...initial]);
    const built = new ArtifactList(initial);
    for (const event of events) built.apply(event.artifact, event.append); // a frozen input changed would throw
    expect(built.items).toEqual(expected);
    const chunks = events.map((e) => `,${JSON.stringify({ artifactUpdate: { ...e, taskId: "t", contextId: "c" } })}`);
    expect(assembleArtifacts(JSON.stringify(initial), chunks.join(""))).toEqual(expected);
  }
});
