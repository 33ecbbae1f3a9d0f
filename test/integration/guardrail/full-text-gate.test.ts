// The full-text gate, as a property over 200 seeded cases run by a real actor process behind a real gateway: for any
// output, chunking and verdict, no channel (journal, SSE of SendStreamingMessage and SubscribeToTask, GetTask,
// ListTasks, push notifications) carries any fragment of the output before the check passed, and none after a failure.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { journalProblems, leak } from "./content-judge.ts";
import { type Gate, generatedProfile, inLanes, observe, startGate } from "./gate-harness.ts";
import { CONTENT, DENY_WORD, expectedState, generateCase } from "./generated-output.ts";

/** Set GATE_SEED to replay a run; every problem names the seed of its case. */
const BASE_SEED = Number(process.env.GATE_SEED ?? 20_250_601);
const CASES = 200;

let server: TestRedis;
let gate: Gate;
beforeAll(async () => {
  server = await startRedis();
  gate = await startGate(server, [generatedProfile("gated", { guardrails: { denyPatterns: [DENY_WORD] } })]);
});
afterAll(async () => {
  await gate.stop();
  await server.stop();
});

test(`${CASES} generated outputs: content leaves only whole, only after the check passed`, async () => {
  const problems: string[] = [];
  const tally = { passed: 0, failed: 0, interrupted: 0, progressOnly: 0 };
  const seeds = Array.from({ length: CASES }, (_, index) => BASE_SEED + index);
  await inLanes(seeds, 12, async (seed) => {
    const generated = generateCase(seed);
    const seen = await observe(gate, "gated", `case ${seed}`);
    const frames = [
      ...seen.sent.map((frame, index) => [`SendStreamingMessage frame ${index}`, frame] as const),
      ...seen.subscribed.map((frame, index) => [`SubscribeToTask frame ${index}`, frame] as const),
      ...seen.polls.map((answer, index) => [`GetTask/ListTasks answer ${index}`, answer] as const),
      ...seen.pushed.map((body, index) => [`push notification ${index}`, body] as const),
    ];
    for (const [channel, value] of frames) {
      const found = leak(value, generated, channel);
      if (found) problems.push(found);
    }
    problems.push(...journalProblems(seen.journal, generated));
    // Push notifications are the journal's events (the revisions after the accept), in order.
    if (JSON.stringify(seen.pushed) !== JSON.stringify(seen.journal)) {
      problems.push(`seed ${seed}: the push notifications are not the journal's events`);
    }
    // The stream ends where the journal ends; past its snapshot, only the release events carry content.
    const state = expectedState(generated);
    const last = seen.sent.at(-1);
    const lastState = last?.statusUpdate?.status.state ?? last?.task?.status.state;
    if (lastState !== state) problems.push(`seed ${seed}: the stream ended in ${lastState}, expected ${state}`);
    const released = seen.sent.slice(1).filter((frame) => CONTENT.test(JSON.stringify(frame))).length;
    const inSnapshot = seen.sent[0]?.task?.artifacts?.length ?? 0; // a late snapshot may show released artifacts
    const releases =
      state === "TASK_STATE_FAILED"
        ? 0
        : generated.artifacts.length - inSnapshot + (generated.ending === "input" ? 1 : 0);
    if (seen.sent.length > 1 && released !== releases) {
      problems.push(`seed ${seed}: ${released} stream events with content, expected ${releases}`);
    }
    if (state === "TASK_STATE_FAILED") tally.failed += 1;
    else if (state === "TASK_STATE_INPUT_REQUIRED") tally.interrupted += 1;
    else tally.passed += 1;
    // (from the journal: a stream whose snapshot was read after the first progress step does not carry that step)
    if (seen.journal.some((event) => event.statusUpdate?.metadata?.["a2a-runtime/progress"])) tally.progressOnly += 1;
  });
  expect(problems).toEqual([]);
  // The property covered every kind of case, and the judge saw content where it is allowed (it can fail).
  expect(tally.passed).toBeGreaterThan(40);
  expect(tally.failed).toBeGreaterThan(40);
  expect(tally.interrupted).toBeGreaterThan(10);
  expect(tally.progressOnly).toBeGreaterThan(CASES / 2);
}, 60_000);

test("the judge finds a leaked fragment: a streamed chunk and a partial artifact are caught", () => {
  const generated = generateCase(BASE_SEED);
  const passing = { ...generated, verdict: "pass" as const, ending: "complete" as const, text: "αβγ δεζ" };
  const chunk = {
    artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "response-1", parts: [{ text: "α" }] } },
  };
  expect(leak(chunk, passing, "frame")).toContain("content outside a whole released piece");
  const whole = { artifactId: "response-1", name: "response", parts: [{ text: "αβγ δεζ" }] };
  const release = { artifactUpdate: { taskId: "t", contextId: "c", artifact: whole, lastChunk: true } };
  expect(leak(release, { ...passing, artifacts: [whole] }, "frame")).toBeUndefined();
  expect(leak(release, { ...passing, artifacts: [whole], verdict: "deny" }, "frame")).toBeDefined();
  expect(
    leak(
      { ...release, artifactUpdate: { ...release.artifactUpdate, lastChunk: false } },
      { ...passing, artifacts: [whole] },
      "f",
    ),
  ).toBeDefined();
});
