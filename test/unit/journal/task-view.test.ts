// decodeTaskFields and toTask: the stored hash becomes the A2A Task a client sees, with historyLength and
// includeArtifacts applied and empty lists omitted.
import { describe, expect, test } from "bun:test";
import { decodeTaskFields, parseJournalEntry, type TaskRecord, toTask } from "../../../src/journal/index.ts";
import type { Artifact, Message, StreamResponse } from "../../../src/protocol/index.ts";

const history: Message[] = [1, 2, 3].map((i) => ({
  messageId: `m${i}`,
  role: "ROLE_USER",
  parts: [{ text: `t${i}` }],
}));
const artifacts: Artifact[] = [{ artifactId: "a1", parts: [{ text: "out" }] }];
const stored: Record<string, string> = {
  ctx: "C1",
  cli: "client",
  prof: "echo",
  state: "TASK_STATE_WORKING",
  rev: "4",
  ts: "1700000000000",
  st: JSON.stringify({ state: "TASK_STATE_WORKING", timestamp: "2023-11-14T22:13:20.000Z" }),
  hist: JSON.stringify(history),
  arts: JSON.stringify(artifacts),
  meta: JSON.stringify({ k: "v" }),
};

describe("decodeTaskFields", () => {
  test("reads an HGETALL object and a flat reply alike", () => {
    const fromObject = decodeTaskFields("T1", stored);
    expect(decodeTaskFields("T1", Object.entries(stored).flat())).toEqual(fromObject);
    const expected: TaskRecord = {
      id: "T1",
      contextId: "C1",
      clientId: "client",
      profile: "echo",
      state: "TASK_STATE_WORKING",
      rev: 4,
      timestampMs: 1700000000000,
      status: { state: "TASK_STATE_WORKING", timestamp: "2023-11-14T22:13:20.000Z" },
      history,
      artifacts,
      metadata: { k: "v" },
    };
    expect(fromObject).toEqual(expected);
  });

  test("a task without metadata has none", () => {
    const { meta: _, ...rest } = stored;
    expect(decodeTaskFields("T1", rest).metadata).toBeUndefined();
  });
});

describe("toTask", () => {
  const record = decodeTaskFields("T1", stored);
  test("by default shows all history and the artifacts", () => {
    expect(toTask(record)).toEqual({
      id: "T1",
      contextId: "C1",
      status: record.status,
      history,
      artifacts,
      metadata: { k: "v" },
    });
  });
  test("historyLength 0 omits history, N keeps the N most recent messages", () => {
    expect("history" in toTask(record, { historyLength: 0 })).toBe(false);
    expect(toTask(record, { historyLength: 2 }).history?.map((m) => m.messageId)).toEqual(["m2", "m3"]);
    expect(toTask(record, { historyLength: 10 }).history?.length).toBe(3);
  });
  test("includeArtifacts false omits the key; empty lists are omitted", () => {
    expect("artifacts" in toTask(record, { includeArtifacts: false })).toBe(false);
    const empty = decodeTaskFields("T1", { ...stored, hist: "[]", arts: "[]" });
    const task = toTask(empty);
    expect("history" in task || "artifacts" in task).toBe(false);
  });
});

test("parseJournalEntry reads the revision and the event", () => {
  const event: StreamResponse = {
    statusUpdate: { taskId: "T", contextId: "C", status: { state: "TASK_STATE_WORKING" } },
  };
  expect(parseJournalEntry("1-0", ["rev", "7", "ev", JSON.stringify(event)])).toEqual({
    id: "1-0",
    rev: 7,
    event,
  });
});
