// End to end with a real actor: the `work` supervisor runs `echo`, which streams its answer in 20 chunks; the SSE
// events a client reads over HTTP are the task snapshot and then exactly the journal's later entries.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, startHarness } from "../gateway/harness.ts";
import { journal, streamKeys } from "./helpers.ts";

const CLI = new URL("../../../src/cli.ts", import.meta.url).pathname;

let h: Harness;
let worker: ChildProcess;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  worker = spawn(process.execPath, [CLI, "work", "--actors", "1"], {
    env: { ...env, ...h.env, A2A_WORKER_DRAIN_SECONDS: "1" },
    stdio: "ignore",
  });
  await eventually(async () => (await fetch(`${h.gateway.url}/readyz`)).status === 200, 15_000);
  client = await h.client();
});

afterAll(async () => {
  const exited = new Promise((resolve) => worker.once("exit", resolve));
  worker.kill("SIGTERM");
  await exited;
  await h.stop();
});

test("an echo run that streams 20 deltas: snapshot first, then every journal entry, none doubled or missing", async () => {
  const answer = "The quick brown fox jumps over the lazy dog, twenty pieces at a time, in order.";
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    // (the half second before the first delta is the margin of the snapshot, read after the accept, on a busy machine)
    { message: message(`[sleep 500] [chunks 20 5] ${answer}`) },
    { key: client.key, id: 20 },
  );
  await stream.closed;
  const [first, ...rest] = stream.results;
  const taskId = first.task.id as string;
  // the snapshot is read after the accept: the claim may have started the run by then, or even written a delta
  expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(first.task.status.state);
  const entries = await journal(h, taskId);
  // the entries the snapshot already covers (none when it is the task as accepted: the journal starts after it)
  const seen = entries.length - rest.length;
  expect(seen).toBeGreaterThanOrEqual(0);
  expect(rest).toEqual(entries.slice(seen).map((entry) => entry.event));
  expect(stream.messages.every((sent) => sent.id === 20)).toBe(true);

  const chunks = rest.filter((result) => result.artifactUpdate).map((result) => result.artifactUpdate);
  const before = (first.task.artifacts ?? []).map((artifact: { parts: { text: string }[] }) => artifact.parts[0]?.text);
  // 20 deltas; those asked while a write is in flight share the next update, so a loaded machine may show fewer
  expect(chunks.length).toBeGreaterThanOrEqual(1);
  expect(chunks.length).toBeLessThanOrEqual(20);
  const n = chunks.length;
  expect(chunks.map((chunk) => chunk.append === true)).toEqual([before.length > 0, ...Array(n - 1).fill(true)]);
  expect(chunks.map((chunk) => chunk.lastChunk === true)).toEqual([...Array(n - 1).fill(false), true]);
  expect(new Set(chunks.map((chunk) => chunk.artifact.artifactId)).size).toBe(1);
  expect([...before, ...chunks.map((chunk) => chunk.artifact.parts[0].text)].join("")).toBe(answer);
  expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
}, 20_000);
