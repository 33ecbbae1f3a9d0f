// Handler module for the gate suite, loaded by real actors with `work --handlers`: "case <seed>" emits the seeded
// output of generated-output.ts step by step; "hold <seed>" emits the steps and then waits until the run is aborted;
// "flood" emits 100,000 Greek deltas of 5 characters, each awaited; "spray" emits 2,000 without awaiting any, and returns.
// "paced <seed> <port>" runs as "case" does, but first waits for GET /start and before its end for GET /end on a local
// server of the test's (which answers when the test has seen what it waits for).
import { defineHandler, type HandlerContext, HandlerFailure, textOf } from "../../../src/actors/index.ts";
import { generateCase, type Step } from "./generated-output.ts";

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

async function emit(ctx: HandlerContext, step: Step): Promise<void> {
  if ("text" in step) return await ctx.emit.text(step.text);
  if (!step.circular) return await ctx.emit.artifact(step.artifact);
  const loop: Record<string, unknown> = { note: "refers to itself" };
  loop.self = loop; // JSON cannot hold it: a guardrail reading data parts throws
  await ctx.emit.artifact({ artifactId: step.artifact.artifactId, parts: [{ data: loop }] });
}

/** Greek letters: the suite's content marker (generated-output.ts's CONTENT). */
const DELTA = "αβγδε";

export const generated = defineHandler("generated", async (ctx) => {
  const command = textOf(ctx.input).trim();
  if (command === "flood") {
    for (let i = 0; i < 100_000; i++) await ctx.emit.text(DELTA);
    return;
  }
  if (command === "spray") {
    for (let i = 0; i < 2_000; i++) void ctx.emit.text(DELTA);
    return;
  }
  const [, mode = "", seed = "", port] = /^(case|hold|paced) (\d+)(?: (\d+))?$/.exec(command) ?? [];
  const planned = generateCase(Number(seed));
  const cue = (path: string) => fetch(`http://127.0.0.1:${port}${path}`, { signal: ctx.signal }).then((r) => r.text());
  if (mode === "paced") await cue("/start");
  for (const step of planned.steps) {
    await emit(ctx, step);
    await pause(step.gapMs, ctx.signal);
  }
  if (mode === "hold") {
    await pause(3_600_000, ctx.signal);
    return;
  }
  if (mode === "paced") await cue("/end");
  if (planned.ending === "failure") throw new HandlerFailure(planned.message);
  if (planned.ending === "input") return ctx.requireInput(planned.message);
});
