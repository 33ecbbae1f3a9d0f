// Following a task through stream events, and the text people see of parts and artifacts.
import { describe, expect, test } from "bun:test";
import { artifactsText, partsText, stateLabel, TaskTracker } from "../../../src/client/index.ts";

const ids = { taskId: "t1", contextId: "c1" };

describe("TaskTracker", () => {
  test("a snapshot, status updates and appended artifact chunks make up the task", () => {
    const tracker = new TaskTracker();
    expect(tracker.settled).toBe(false);
    tracker.apply({ task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } });
    tracker.apply({ statusUpdate: { ...ids, status: { state: "TASK_STATE_WORKING" } } });
    tracker.apply({ artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "Hel" }] } } });
    tracker.apply({ artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "lo" }] }, append: true } });
    tracker.apply({ artifactUpdate: { ...ids, artifact: { artifactId: "b", parts: [{ text: "second" }] } } });
    expect(tracker.state).toBe("TASK_STATE_WORKING");
    expect(tracker.settled).toBe(false);
    expect(artifactsText(tracker.task?.artifacts)).toBe("Hello\nsecond");
    tracker.apply({ statusUpdate: { ...ids, status: { state: "TASK_STATE_COMPLETED" } } });
    expect(tracker.settled).toBe(true);
    expect(tracker.task?.artifacts).toHaveLength(2);
  });

  test("an artifact update without append replaces the artifact; a new snapshot replaces everything", () => {
    const tracker = new TaskTracker();
    tracker.apply({ artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "draft" }] } } });
    tracker.apply({ artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "final" }] } } });
    expect(artifactsText(tracker.task?.artifacts)).toBe("final");
    tracker.apply({
      task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_INPUT_REQUIRED" }, artifacts: [] },
    });
    expect(tracker.task?.artifacts).toEqual([]);
    expect(tracker.settled).toBe(true);
  });

  test("a message answer settles the exchange", () => {
    const tracker = new TaskTracker();
    tracker.apply({ message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }] } });
    expect(tracker.settled).toBe(true);
    expect(tracker.task).toBeUndefined();
  });
});

describe("text of parts", () => {
  test("text parts join as they are; data, url and raw parts get lines of their own", () => {
    expect(partsText([{ text: "a" }, { text: "b" }])).toBe("ab");
    expect(
      partsText([
        { text: "see" },
        { data: { k: 1 } },
        { url: "https://example.com/x.pdf" },
        { raw: "aGVsbG8=", filename: "h.txt", mediaType: "text/plain" },
      ]),
    ).toBe('see\n{"k":1}\nhttps://example.com/x.pdf\n[file h.txt (text/plain), 5 bytes]\n');
  });

  test("state labels read as words", () => {
    expect(stateLabel("TASK_STATE_INPUT_REQUIRED")).toBe("input required");
    expect(stateLabel(undefined)).toBe("sending");
  });
});
