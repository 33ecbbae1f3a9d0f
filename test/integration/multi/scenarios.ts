// What a client does and sees, as checks shared by the cluster suite and the Deno smoke test: a blocking SendMessage,
// an accepted task polled with GetTask, a streamed run, and a webhook delivered by a worker.
import { expect } from "bun:test";
import { openStream } from "../../support/sse-client.ts";
import { waitFor } from "../actors/harness.ts";
import { message, rpc } from "../gateway/harness.ts";
import type { Receiver } from "../push/receiver.ts";
import { artifactText, type TaskJson, taskInState } from "./installation.ts";

/** A blocking SendMessage answers with the finished task and its echo. */
export async function blockingEcho(base: string, key: string, text: string): Promise<TaskJson> {
  const answer = await rpc(base, "SendMessage", { message: message(text) }, { key });
  expect(answer.status).toBe(200);
  const task = answer.body.result.task;
  expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(artifactText(task)).toBe(text);
  return task;
}

/** SendMessage with returnImmediately answers before the run ends; GetTask later shows it completed. */
export async function acceptedThenCompleted(base: string, key: string, text: string): Promise<TaskJson> {
  const answer = await rpc(
    base,
    "SendMessage",
    { message: message(`[sleep 300] ${text}`), configuration: { returnImmediately: true } },
    { key },
  );
  expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain(answer.body.result.task.status.state);
  const done = await taskInState(base, key, answer.body.result.task.id, "TASK_STATE_COMPLETED");
  expect(artifactText(done)).toBe(text);
  return done;
}

/**
 * SendStreamingMessage: the task snapshot first, then the chunks in order (the snapshot may already hold the first
 * ones), and the stream ends at COMPLETED.
 */
export async function streamedEcho(base: string, key: string, words: string): Promise<void> {
  // the sleep is the margin of the snapshot (read after the accept) before the first chunk, on a busy machine
  const text = `[sleep 600] [chunks 3 150] ${words}`;
  const stream = await openStream(base, "SendStreamingMessage", { message: message(text) }, { key });
  expect(stream.status).toBe(200);
  await stream.until((r) => r.ended, 15_000);
  const [snapshot, ...events] = stream.results;
  expect(snapshot.task.history[0].parts[0].text).toBe(text);
  const chunks = events.flatMap((r) => r.artifactUpdate?.artifact.parts.map((p: { text: string }) => p.text) ?? []);
  expect(chunks.length).toBeGreaterThan(1);
  expect(artifactText(snapshot.task) + chunks.join("")).toBe(words);
  expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
}

/**
 * An inline push config: a worker POSTs the task's events to `hook` (a loopback receiver whose port the installation
 * allow-lists), the last one COMPLETED.
 */
export async function pushDelivered(base: string, key: string, text: string, hook: Receiver): Promise<void> {
  const url = `http://127.0.0.1:${hook.port}/hook`;
  const answer = await rpc(
    base,
    "SendMessage",
    { message: message(text), configuration: { taskPushNotificationConfig: { url, token: "tok-multi" } } },
    { key },
  );
  const task = answer.body.result.task;
  expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  const states = () =>
    hook.requests.flatMap((r) => (JSON.parse(r.body).statusUpdate?.status.state as string | undefined) ?? []);
  await waitFor(async () => states().includes("TASK_STATE_COMPLETED"), 10_000, "a COMPLETED webhook");
  expect(hook.requests.every((r) => r.headers["x-a2a-notification-token"] === "tok-multi")).toBe(true);
  expect(hook.requests.every((r) => r.body.includes(task.id))).toBe(true);
}
