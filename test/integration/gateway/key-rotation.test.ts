// `clients rotate` against a real gateway: a client whose key leaked (or is due for rotation) gets a new key and keeps
// its tasks. Without a grace the old key is refused at once and the streams it may have opened are cut; with one, both
// keys work until the grace ends, then only the new one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hashApiKey } from "../../../src/journal/index.ts";
import { openStream } from "../../support/sse-client.ts";
import { type CliResult, startCli } from "../client/cli-runner.ts";
import { eventually, type Harness, message, rpc, startHarness } from "./harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  await h.actor.live();
});

afterAll(async () => {
  await h.stop();
});

/** `clients rotate <id> …` as an operator runs it. */
function rotate(id: string, ...options: string[]): Promise<CliResult> {
  return startCli(["clients", "rotate", id, ...options], h.env).done;
}

async function queuedTask(key: string): Promise<string> {
  const params = { message: message("hold on"), configuration: { returnImmediately: true } };
  return (await rpc(h.gateway.url, "SendMessage", params, { key })).body.result.task.id;
}

test("rotate: the new key reads the client's tasks; the old key is refused at once and its open stream is cut", async () => {
  const client = await h.client();
  const taskId = await queuedTask(client.key);
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key });
  await stream.waitForEvents(1);

  const rotated = await rotate(client.id, "--json");
  expect(rotated.code).toBe(0);
  const { id, apiKey, previousKeyUntil } = JSON.parse(rotated.stdout);
  expect(id).toBe(client.id);
  expect(previousKeyUntil).toBeNull();
  expect(apiKey).not.toBe(client.key);

  await stream.closed; // cut by the gateway, told by the rotation
  expect(stream.ended).toBe(true);
  const refused = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: client.key });
  expect(refused.status).toBe(401);
  const got = await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: apiKey });
  expect(got.body.result.id).toBe(taskId);
  const listed = await rpc(h.gateway.url, "ListTasks", {}, { key: apiKey });
  expect(listed.body.result.tasks.map((task: { id: string }) => task.id)).toEqual([taskId]);
});

test("rotate --grace: both keys work, then the old one stops when its grace ends; the stream stays open", async () => {
  const client = await h.client();
  const taskId = await queuedTask(client.key);
  const stream = await openStream(h.gateway.url, "SubscribeToTask", { id: taskId }, { key: client.key });
  await stream.waitForEvents(1);

  // (6 s: both keys must still work after the CLI's exit and two requests on a busy machine)
  const rotated = await rotate(client.id, "--grace", "6");
  expect(rotated.code).toBe(0);
  const apiKey = /new API key \(shown once, store it now\): (\S+)/.exec(rotated.stdout)?.[1] ?? "";
  expect(rotated.stdout).toMatch(/the previous key works until \d{4}-\d\d-\d\dT/);
  expect(rotated.stdout.split(apiKey)).toHaveLength(2); // printed once
  for (const key of [client.key, apiKey]) {
    expect((await rpc(h.gateway.url, "GetTask", { id: taskId }, { key })).body.result.id).toBe(taskId);
  }
  expect(stream.ended).toBe(false);

  // the old key's mapping lapses with the grace (what authentication reads); a cached lookup lasts at most 1 s more
  await eventually(async () => (await h.redis.exists(h.keys.apiKey(hashApiKey(client.key)))) === 0, 20_000);
  await eventually(
    async () => (await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: client.key })).status === 401,
  );
  expect((await rpc(h.gateway.url, "GetTask", { id: taskId }, { key: apiKey })).body.result.id).toBe(taskId);
  expect(stream.ended).toBe(false);
  stream.abort();
});

test("a revoked client or an unknown id cannot be rotated: a clear error, a non-zero exit code, no key printed", async () => {
  const client = await h.client();
  await h.clients.revoke(client.id);
  const revoked = await rotate(client.id);
  expect(revoked.code).not.toBe(0);
  expect(revoked.stderr).toContain(`client ${client.id} is revoked: add a new client instead`);
  expect(revoked.stdout).not.toContain("a2a_");
  const unknown = await rotate("no-such-id");
  expect(unknown.code).not.toBe(0);
  expect(unknown.stderr).toContain("no client with id no-such-id");
  for (const grace of ["-1", "1.5", String(366 * 24 * 3600)]) {
    const badGrace = await rotate(client.id, "--grace", grace);
    expect(badGrace.code).not.toBe(0);
    expect(badGrace.stderr).toContain("--grace");
  }
});
