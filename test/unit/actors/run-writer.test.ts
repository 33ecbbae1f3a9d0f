// RunWriter's steps against a recording ledger: what is asked while a step is in flight goes in the next step, text
// appends to one artifact merge into one update, a run's end carries its artifact updates and compacts the list, room()
// holds a streaming handler back past the high-water mark, and a lost lease rejects what follows.
import { describe, expect, test } from "bun:test";
import {
  BACKLOG_HIGH_WATER_BYTES,
  INTERRUPTED_LIMIT_FAILURE,
  LeaseLostError,
  RunWriter,
} from "../../../src/actors/run-writer.ts";
import type { Claim, TransitionInput, TransitionResult } from "../../../src/journal/index.ts";

const CLAIM: Claim = {
  shard: 0,
  taskId: "t1",
  entryId: "1-1",
  fence: 1,
  tries: 1,
  exhausted: false,
  cancelRequested: false,
  state: "TASK_STATE_WORKING",
  clientId: "c1",
  profile: "p",
};
const RETENTION = { retentionSeconds: 60, journalRetentionSeconds: 10, inputTimeoutSeconds: 60 };

/** A ledger whose transitions land when the test says so (or at once), recording each step. */
class StepLedger {
  readonly steps: TransitionInput[] = [];
  private readonly waiting: (() => void)[] = [];
  held = false;
  answer: TransitionResult = { ok: true, rev: 1 };

  transition(input: TransitionInput): Promise<TransitionResult> {
    this.steps.push(input);
    if (!this.held) return Promise.resolve(this.answer);
    return new Promise((resolve) => this.waiting.push(() => resolve(this.answer)));
  }

  /** Lands the step in flight. */
  land(): void {
    this.waiting.shift()?.();
  }
}

const text = (step: TransitionInput) =>
  [...(step.artifactEvents ?? []), ...(step.kind === "artifact" ? [step.event] : [])].map(
    (event) => event.artifactUpdate?.artifact.parts.map((part) => ("text" in part ? part.text : "")).join("") ?? "",
  );
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("RunWriter", () => {
  test("a step refused at the client's interrupted-task limit is written again as FAILED, saying why", async () => {
    // the ledger refuses what would interrupt the task, as the transition script does at the limit
    const steps: TransitionInput[] = [];
    const ledger = {
      transition: (input: TransitionInput): Promise<TransitionResult> => {
        steps.push(input);
        const interrupts = input.kind === "status" && input.state === "TASK_STATE_INPUT_REQUIRED";
        return Promise.resolve(
          interrupts ? { ok: false, reason: "interrupted-limit" } : { ok: true, rev: steps.length },
        );
      },
    };
    let lost = "";
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, (reason) => {
      lost = reason;
    });
    await writer.artifact({ artifactId: "r", parts: [{ text: "partial" }] });
    await writer.status("TASK_STATE_INPUT_REQUIRED", { text: "which one?", history: true });
    expect(lost).toBe("");
    const [asked, written] = steps.slice(-2);
    expect(asked?.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(written?.state).toBe("TASK_STATE_FAILED");
    expect(written?.status?.message?.parts).toEqual([{ text: INTERRUPTED_LIMIT_FAILURE }]);
    expect(written?.event.statusUpdate?.status.state).toBe("TASK_STATE_FAILED");
    expect(written?.historyMessage).toBeUndefined();
    expect(written?.artifacts).toEqual(asked?.artifacts);
  });

  test("appends asked while a step is in flight merge into one update of the next step", async () => {
    const ledger = new StepLedger();
    ledger.held = true;
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});
    const artifact = (t: string) => ({ artifactId: "r", name: "response", parts: [{ text: t }] });
    const first = writer.artifact(artifact("a"));
    await tick();
    expect(ledger.steps.length).toBe(1);
    const rest = ["b", "c", "d"].map((t, i) => writer.artifact(artifact(t), { append: true, lastChunk: i === 2 }));
    ledger.land();
    await first;
    await tick();
    expect(ledger.steps.length).toBe(2);
    expect(text(ledger.steps[1] as TransitionInput)).toEqual(["bcd"]);
    expect(ledger.steps[1]?.event.artifactUpdate).toMatchObject({ append: true, lastChunk: true });
    ledger.land();
    await Promise.all(rest);
    expect(writer.artifacts).toEqual([artifact("abcd")]);
  });

  test("deltas a handler awaits one after another in one turn go in one step; one after an I/O wait in its own", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});
    const artifact = (t: string) => ({ artifactId: "r", parts: [{ text: t }] });
    // what JournalSink.text does per delta: ask for the write, then wait for room (which is there at once)
    for (const [i, t] of ["a", "b", "c"].entries()) {
      void writer.artifact(artifact(t), i === 0 ? {} : { append: true });
      await writer.room();
    }
    await tick();
    expect(ledger.steps.map(text)).toEqual([["abc"]]);
    void writer.artifact(artifact("d"), { append: true });
    await writer.room();
    await tick();
    expect(ledger.steps.map(text)).toEqual([["abc"], ["d"]]);
    await writer.flushed();
    expect(writer.artifacts).toEqual([artifact("abcd")]);
  });

  test("a run's end asked with its last chunk is one step: the update, the status and the whole list", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});
    const artifact = { artifactId: "r", parts: [{ text: "hello" }] };
    await Promise.all([writer.artifact(artifact, { lastChunk: true }), writer.status("TASK_STATE_COMPLETED")]);
    expect(ledger.steps.length).toBe(1);
    const [end] = ledger.steps;
    expect(end).toMatchObject({ kind: "status", state: "TASK_STATE_COMPLETED", artifacts: [artifact] });
    expect(text(end as TransitionInput)).toEqual(["hello"]);
    // progress notes do not compact
    await writer.status("TASK_STATE_WORKING", { text: "note" });
    expect(ledger.steps[1]?.artifacts).toBeUndefined();
  });

  test("room() resolves at once under the high-water mark and after the step in flight lands above it", async () => {
    const ledger = new StepLedger();
    ledger.held = true;
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});
    let roomy = false;
    await writer.room().then(() => {
      roomy = true;
    });
    expect(roomy).toBe(true);
    void writer.artifact({ artifactId: "r", parts: [{ text: "x".repeat(BACKLOG_HIGH_WATER_BYTES) }] });
    let later = false;
    const room = writer.room().then(() => {
      later = true;
    });
    await tick();
    expect(later).toBe(false);
    ledger.land();
    await room;
    expect(later).toBe(true);
  });

  test("a stale answer reports the lost lease once and rejects the step and every later write", async () => {
    const ledger = new StepLedger();
    ledger.answer = { ok: false, reason: "stale" };
    const lost: string[] = [];
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, (r) => lost.push(r));
    await expect(writer.status("TASK_STATE_WORKING")).rejects.toBeInstanceOf(LeaseLostError);
    await expect(writer.artifact({ artifactId: "r", parts: [{ text: "late" }] })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(lost).toEqual(["stale"]);
    expect(ledger.steps.length).toBe(1);
  });
});

test("with ackOnEnd the step that ends the leg names the queue entry and keeps what the ack read", async () => {
  const ledger = new StepLedger();
  ledger.answer = { ok: true, rev: 3, acked: true, oldestDeferred: "01NEXT" };
  const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});
  writer.ackOnEnd = true;
  await writer.status("TASK_STATE_WORKING", { text: "note" });
  expect(ledger.steps[0]?.ackEntry).toBeUndefined();
  await writer.status("TASK_STATE_COMPLETED");
  expect(ledger.steps[1]?.ackEntry).toBe(CLAIM.entryId);
  expect(writer.acked).toEqual({ oldestDeferred: "01NEXT" });
});
