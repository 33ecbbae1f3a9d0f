// RunWriter's steps against a recording ledger: what is asked while a step is in flight goes in the next step, text
// appends to one artifact merge into one update, a run's end carries its artifact updates and compacts the list, room()
// holds a streaming handler back past the high-water mark, and a lost lease rejects what follows.
import { describe, expect, test } from "bun:test";
import {
  BACKLOG_HIGH_WATER_BYTES,
  INTERRUPTED_LIMIT_FAILURE,
  LeaseLostError,
  OutputLimitError,
  outputLimitFailure,
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

describe("RunWriter: the run's start", () => {
  const writerOn = (ledger: StepLedger) =>
    new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {});

  test("a handler that answers in the start's turn ends its run in one step: WORKING first, then its output and end", async () => {
    const ledger = new StepLedger();
    const writer = writerOn(ledger);
    const started = writer.start();
    const out = writer.artifact({ artifactId: "r", parts: [{ text: "hi" }] });
    const end = writer.status("TASK_STATE_COMPLETED");
    await Promise.all([started, out, end]);
    expect(ledger.steps).toHaveLength(1);
    const [step] = ledger.steps;
    expect(step?.kind).toBe("status");
    expect(step?.state).toBe("TASK_STATE_COMPLETED");
    expect(step?.lead?.status.state).toBe("TASK_STATE_WORKING");
    expect(step?.lead?.event.statusUpdate?.status).toEqual(step?.lead?.status);
    expect(step ? text(step) : []).toEqual(["hi"]);
  });

  test("a handler that waits for I/O first: WORKING alone at the end of the turn, its output in the next step", async () => {
    const ledger = new StepLedger();
    const writer = writerOn(ledger);
    const started = writer.start();
    await tick();
    await started;
    expect(ledger.steps).toHaveLength(1);
    expect(ledger.steps[0]).toMatchObject({ kind: "status", state: "TASK_STATE_WORKING" });
    expect(ledger.steps[0]?.lead).toBeUndefined();
    expect(ledger.steps[0]?.event.statusUpdate?.status.state).toBe("TASK_STATE_WORKING");
    await writer.artifact({ artifactId: "r", parts: [{ text: "later" }] });
    expect(ledger.steps).toHaveLength(2);
    expect(ledger.steps[1]?.kind).toBe("artifact");
    expect(ledger.steps[1]?.lead).toBeUndefined();
  });

  test("output without an end in the start's turn: one artifact step that carries the start", async () => {
    const ledger = new StepLedger();
    const writer = writerOn(ledger);
    await Promise.all([writer.start(), writer.artifact({ artifactId: "r", parts: [{ text: "a" }] })]);
    expect(ledger.steps).toHaveLength(1);
    expect(ledger.steps[0]?.kind).toBe("artifact");
    expect(ledger.steps[0]?.lead?.status.state).toBe("TASK_STATE_WORKING");
  });

  test("with a step interval, the start and the first output leave at once", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 60_000,
    });
    await Promise.all([writer.start(), writer.artifact({ artifactId: "r", parts: [{ text: "a" }] })]);
    expect(ledger.steps).toHaveLength(1);
    expect(ledger.steps[0]?.lead).toBeDefined();
  });
});

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

describe("RunWriter with a step interval", () => {
  const artifact = (t: string) => ({ artifactId: "r", name: "response", parts: [{ text: t }] });
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Settles with "deadline" after `ms` unless `written` settles first; the timer is cleared either way. */
  const before = async (written: Promise<unknown>, ms: number) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve("deadline"), ms);
    });
    try {
      return await Promise.race([written.then(() => "written"), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
  /** Asks for the first delta and waits for its step, then asks for a second, which waits for the interval. */
  const oneWritten = async (writer: RunWriter, ledger: StepLedger) => {
    await writer.artifact(artifact("a"));
    const second = writer.artifact(artifact("b"), { append: true });
    second.catch(() => {});
    await tick();
    expect(ledger.steps.length).toBe(1);
    return { second };
  };

  test("deltas a few ms apart share steps, whole and in order, and the run's end carries the rest", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 100,
    });
    const deltas = Array.from({ length: 40 }, (_, i) => `${String(i).padStart(2, "0")};`);
    const started = performance.now();
    // what JournalSink.text does per delta, with a handler that pauses 5 ms between deltas (~200 ms in all)
    for (const [i, delta] of deltas.entries()) {
      void writer.artifact(artifact(delta), i === 0 ? {} : { append: true });
      await writer.room();
      await pause(5);
    }
    await writer.status("TASK_STATE_COMPLETED");
    const elapsed = performance.now() - started;
    // one artifact step per 100 ms at most, and the end: about 4 (40 without the interval); measured against the time
    // the deltas took, so that a slow host (longer pauses) cannot fail it
    expect(ledger.steps.length).toBeLessThanOrEqual(Math.floor(elapsed / 100) + 2);
    expect(ledger.steps.length).toBeLessThan(deltas.length);
    expect(ledger.steps.flatMap(text).join("")).toBe(deltas.join(""));
    expect(ledger.steps.slice(0, -1).every((step) => step.kind === "artifact")).toBe(true);
    expect(ledger.steps.at(-1)).toMatchObject({ kind: "status", state: "TASK_STATE_COMPLETED" });
    expect(writer.artifacts).toEqual([artifact(deltas.join(""))]);
  });

  test("the first delta goes at once, and a status change does not wait: it carries what waits", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 5000,
    });
    const { second } = await oneWritten(writer, ledger);
    // a progress note: written long before the interval is over, with the delta that waited
    expect(await before(writer.status("TASK_STATE_WORKING", { text: "note" }), 2500)).toBe("written");
    await second;
    expect(ledger.steps.map((step) => [step.kind, text(step)])).toEqual([
      ["artifact", ["a"]],
      ["status", ["b"]],
    ]);
    // so does the run's end
    void writer.artifact(artifact("c"), { append: true, lastChunk: true });
    expect(await before(writer.status("TASK_STATE_COMPLETED"), 2500)).toBe("written");
    expect(ledger.steps.slice(2).map((step) => [step.state, text(step)])).toEqual([["TASK_STATE_COMPLETED", ["c"]]]);
    expect(writer.artifacts).toEqual([artifact("abc")]);
  });

  test("flushed() sends the step that waits for the interval at once", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 5000,
    });
    const { second } = await oneWritten(writer, ledger);
    expect(await before(writer.flushed(), 2500)).toBe("written");
    await second;
    expect(ledger.steps.map(text)).toEqual([["a"], ["b"]]);
    // only what was waiting then: the next delta waits for the interval again
    void writer.artifact(artifact("c"), { append: true });
    await tick();
    expect(ledger.steps.length).toBe(2);
    expect(await before(writer.flushed(), 2500)).toBe("written");
    expect(ledger.steps.map(text)).toEqual([["a"], ["b"], ["c"]]);
  });

  test("once the run's signal fires, what waits goes at once, and so does what follows", async () => {
    const ledger = new StepLedger();
    const controller = new AbortController();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 5000,
      signal: controller.signal,
    });
    const { second } = await oneWritten(writer, ledger);
    controller.abort();
    expect(await before(second, 2500)).toBe("written");
    expect(await before(writer.artifact(artifact("c"), { append: true }), 2500)).toBe("written");
    expect(ledger.steps.map(text)).toEqual([["a"], ["b"], ["c"]]);
  });

  test("after the leg's end, a write asked by a handler that goes on is not held for the interval", async () => {
    const ledger = new StepLedger();
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, () => {}, {
      stepIntervalMs: 5000,
    });
    await writer.artifact(artifact("a"));
    await writer.status("TASK_STATE_COMPLETED");
    expect(await before(writer.artifact(artifact("late"), { append: true }), 2500)).toBe("written");
    expect(ledger.steps.map((step) => step.kind)).toEqual(["artifact", "status", "artifact"]);
  });

  test("a stale answer rejects what waits behind the step at once, and nothing more is sent", async () => {
    const ledger = new StepLedger();
    ledger.held = true;
    ledger.answer = { ok: false, reason: "stale" };
    const lost: string[] = [];
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, (r) => lost.push(r), {
      stepIntervalMs: 5000,
    });
    const first = writer.artifact(artifact("a"));
    await tick();
    const second = writer.artifact(artifact("b"), { append: true });
    second.catch(() => {});
    ledger.land();
    await expect(first).rejects.toBeInstanceOf(LeaseLostError);
    await expect(second).rejects.toBeInstanceOf(LeaseLostError);
    expect(lost).toEqual(["stale"]);
    expect(ledger.steps.length).toBe(1);
  });
});

describe("RunWriter at the task's size limit (worker.maxTaskBytes)", () => {
  /** A ledger that refuses, as the transition script does at the limit, every step that carries content. */
  function limitedLedger() {
    const steps: TransitionInput[] = [];
    let limit = false;
    const ledger = {
      steps,
      reach: () => {
        limit = true;
      },
      transition: (input: TransitionInput): Promise<TransitionResult> => {
        steps.push(input);
        const content =
          (input.artifactEvents?.length ?? 0) > 0 ||
          input.kind === "artifact" ||
          input.artifacts !== undefined ||
          input.historyMessage !== undefined;
        return Promise.resolve(
          limit && content ? { ok: false, reason: "output-limit" } : { ok: true, rev: steps.length },
        );
      },
    };
    return ledger;
  }
  /** A writer on `ledger` that counts in `told` how often it reports the limit (maxTaskBytes 4096); `onLost` as given. */
  function limitedWriter(ledger: ReturnType<typeof limitedLedger>, onLost: (reason: string) => void = () => {}) {
    const told: number[] = [];
    const options = { onOutputLimit: () => told.push(1), maxTaskBytes: 4096 };
    const writer = new RunWriter(ledger, CLAIM, { taskId: "t1", contextId: "x" }, [], RETENTION, onLost, options);
    return { writer, told };
  }

  test("a refused update: its write and every later one reject, the leg is told once, its end goes without content", async () => {
    const ledger = limitedLedger();
    let lost = "";
    const { writer, told } = limitedWriter(ledger, (reason) => {
      lost = reason;
    });
    await writer.start();
    await writer.artifact({ artifactId: "r", parts: [{ text: "stored" }] });
    ledger.reach();
    const refused = writer.artifact({ artifactId: "r", parts: [{ text: "too much" }] }, { append: true });
    await expect(refused).rejects.toBeInstanceOf(OutputLimitError);
    expect(told).toEqual([1]);
    expect(writer.outputLimited).toBe(true);
    const sent = ledger.steps.length;
    // later output is refused at once, without a step
    await expect(
      writer.artifact({ artifactId: "r", parts: [{ text: "more" }] }, { append: true }),
    ).rejects.toBeInstanceOf(OutputLimitError);
    expect(ledger.steps.length).toBe(sent);
    // the leg's end (the executor's failure): no history message, no artifact list, written; the leg is not lost
    await writer.status("TASK_STATE_FAILED", { text: outputLimitFailure(4096), history: true });
    const end = ledger.steps.at(-1);
    expect(end).toMatchObject({ kind: "status", state: "TASK_STATE_FAILED" });
    expect(end?.historyMessage).toBeUndefined();
    expect(end?.artifacts).toBeUndefined();
    expect(end?.artifactEvents).toEqual([]);
    expect(end?.status?.message?.parts).toEqual([{ text: outputLimitFailure(4096) }]);
    expect(writer.ended).toBe(true);
    expect(lost).toBe("");
    expect(told).toEqual([1]);
  });

  test("a refused end (the handler's whole answer in one step) is written again as the failure, keeping the start", async () => {
    const ledger = limitedLedger();
    ledger.reach();
    const { writer, told } = limitedWriter(ledger);
    writer.ackOnEnd = true;
    const started = writer.start();
    const out = writer.artifact({ artifactId: "r", parts: [{ text: "a large answer" }] });
    const end = writer.status("TASK_STATE_COMPLETED", { text: "done", history: true });
    await Promise.all([started, end]);
    // the update's own promise settles with the step that carried it, which was written (without it)
    await out;
    const [asked, written] = ledger.steps;
    expect(asked).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    expect(asked?.artifacts).toBeDefined();
    expect(written).toMatchObject({ kind: "status", state: "TASK_STATE_FAILED", ackEntry: CLAIM.entryId });
    expect(written?.lead?.status.state).toBe("TASK_STATE_WORKING");
    expect(written?.artifactEvents).toEqual([]);
    expect(written?.artifacts).toBeUndefined();
    expect(written?.historyMessage).toBeUndefined();
    expect(written?.event.statusUpdate?.status.message?.parts).toEqual([{ text: outputLimitFailure(4096) }]);
    expect(ledger.steps).toHaveLength(2);
    expect(told).toEqual([1]);
    expect(writer.ended).toBe(true);
  });

  test("an end asked for after the limit, before the leg stopped, fails instead of completing", async () => {
    const ledger = limitedLedger();
    const { writer, told } = limitedWriter(ledger);
    await writer.start();
    ledger.reach();
    await expect(writer.artifact({ artifactId: "r", parts: [{ text: "x" }] })).rejects.toBeInstanceOf(OutputLimitError);
    await writer.status("TASK_STATE_COMPLETED");
    expect(told).toEqual([1]);
    expect(ledger.steps.at(-1)).toMatchObject({ state: "TASK_STATE_FAILED" });
    expect(ledger.steps.at(-1)?.status?.message?.parts).toEqual([{ text: outputLimitFailure(4096) }]);
  });
});
