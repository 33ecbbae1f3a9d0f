// Interrupted states: a stream stays open through AUTH_REQUIRED (credentials arrive out of band and the run goes on)
// and closes after sending INPUT_REQUIRED; the client's follow-up with SendStreamingMessage streams the resumed run.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openStream } from "../../support/sse-client.ts";
import { eventually, type Harness, message, rpc, startHarness } from "../gateway/harness.ts";
import { journal, streamKeys } from "./helpers.ts";

let h: Harness;
let client: { id: string; key: string };

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
  client = await h.client();
});

afterAll(async () => {
  await h.stop();
});

const states = (results: { statusUpdate?: { status: { state: string } } }[]) =>
  results.flatMap((result) => (result.statusUpdate ? [result.statusUpdate.status.state] : []));

test("AUTH_REQUIRED keeps the stream open; the resumed run's events follow on the same stream", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("needs auth") },
    {
      key: client.key,
    },
  );
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await h.actor.move(claim, "TASK_STATE_AUTH_REQUIRED", { text: "Sign in at https://example.com/auth" });
  await stream.waitForEvents(3);
  await Bun.sleep(300);
  expect(stream.ended).toBe(false);

  const resumed = await rpc(
    h.gateway.url,
    "SendMessage",
    { message: message("signed in", { taskId: claim.taskId }), configuration: { returnImmediately: true } },
    { key: client.key },
  );
  expect(resumed.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  const again = await h.actor.takeOne({ taskId: claim.taskId });
  await h.actor.complete(again);
  await stream.closed;
  expect(states(stream.results)).toEqual([
    "TASK_STATE_WORKING",
    "TASK_STATE_AUTH_REQUIRED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_COMPLETED",
  ]);
  expect(stream.results.slice(1)).toEqual((await journal(h, claim.taskId)).map((entry) => entry.event));
});

test("INPUT_REQUIRED closes the stream after that event; a SendStreamingMessage follow-up streams the resumed run", async () => {
  const stream = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("book a trip") },
    {
      key: client.key,
    },
  );
  const claim = await h.actor.takeOne({ clientId: client.id });
  await h.actor.move(claim, "TASK_STATE_WORKING");
  await h.actor.move(claim, "TASK_STATE_INPUT_REQUIRED", { text: "Where to?" });
  await stream.closed;
  expect(states(stream.results)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]);
  expect(stream.results.at(-1).statusUpdate.status.message.parts).toEqual([{ text: "Where to?" }]);
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);

  const watch = await openStream(h.gateway.url, "SubscribeToTask", { id: claim.taskId }, { key: client.key });
  await watch.closed;
  expect(watch.results).toHaveLength(1);
  expect(watch.results[0].task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");

  const followUp = await openStream(
    h.gateway.url,
    "SendStreamingMessage",
    { message: message("Lisbon", { taskId: claim.taskId }), configuration: { historyLength: 2 } },
    { key: client.key },
  );
  await followUp.waitForEvents(1);
  const snapshot = followUp.results[0].task;
  expect(snapshot.status.state).toBe("TASK_STATE_SUBMITTED");
  expect(snapshot.history.map((m: { parts: { text: string }[] }) => m.parts[0]!.text)).toEqual(["Where to?", "Lisbon"]);
  const again = await h.actor.takeOne({ taskId: claim.taskId });
  await h.actor.move(again, "TASK_STATE_WORKING");
  await h.actor.complete(again);
  await followUp.closed;
  expect(states(followUp.results)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
  await eventually(async () => (await streamKeys(h)).length === 0, 1000);
});
