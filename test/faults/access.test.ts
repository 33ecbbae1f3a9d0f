// Scenario 3: every method × {no credentials, bad key, revoked key, another client's key, profile not allowed} gets
// its documented answer and stores nothing; API keys and webhook credentials never appear in the logs of the gateway
// and the actors (captured at debug level) nor in any response.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { ClientRegistry } from "../../src/journal/index.ts";
import { waitFor } from "../integration/actors/harness.ts";
import { message, rpc } from "../integration/gateway/harness.ts";
import { ECHO_PROFILE, type Installation, installation, type Running } from "../integration/multi/installation.ts";
import { type Receiver, startReceiver } from "../integration/push/receiver.ts";
import { keysUnder, startRedis, type TestRedis } from "../support/redis.ts";
import { figures } from "./load.ts";

const TOKEN = "tok-3f9a1c77e2d5b8a0";
const CREDENTIALS = "cred-b71e09d4c3a2f588";
let dir: string;
let server: TestRedis;
let redis: Redis;
let inst: Installation;
let gateway: Running & { url: string };
let work: Running;
let hook: Receiver;
const keys: Record<string, string> = {};
let victimTask: string;
const bodies: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "a2a-access-"));
  const config = join(dir, "config.json");
  const other = { ...ECHO_PROFILE, name: "other", skill: { ...ECHO_PROFILE.skill, id: "other" } };
  hook = await startReceiver();
  const allowHosts = [`127.0.0.1:${hook.port}`];
  writeFileSync(config, JSON.stringify({ profiles: [ECHO_PROFILE, other], push: { allowHosts } }));
  server = await startRedis();
  redis = server.client();
  inst = await installation({ redisUrl: server.url, env: { A2A_CONFIG: config, A2A_LOG_LEVEL: "debug" } });
  [gateway, work] = await Promise.all([inst.gateway(), inst.work("bun", 1)]);
  const victim = await inst.client();
  const attacker = await inst.client();
  const revoked = await inst.client();
  const registry = new ClientRegistry(redis, inst.keys);
  const { apiKey: forbidden } = await registry.add({ name: "other-only", profiles: ["other"] });
  await registry.revoke(revoked.id);
  Object.assign(keys, { victim: victim.key, attacker: attacker.key, revoked: revoked.key, forbidden });

  const push = {
    url: `http://127.0.0.1:${hook.port}/hook`,
    token: TOKEN,
    authentication: { scheme: "Bearer", credentials: CREDENTIALS },
  };
  const answer = await rpc(
    gateway.url,
    "SendMessage",
    { message: message("[input] secret work"), configuration: { taskPushNotificationConfig: push } },
    { key: victim.key },
  );
  bodies.push(JSON.stringify(answer.body));
  victimTask = answer.body.result.task.id;
  expect(answer.body.result.task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  await waitFor(async () => hook.requests.some((r) => r.body.includes("INPUT_REQUIRED")), 15_000, "the webhook");
  // the test compares every key before and after: the last delivery must be settled in Redis, not only received
  await waitFor(
    async () =>
      (await redis.exists(inst.keys.pushOutbox(0, victimTask))) === 0 &&
      (await redis.zcard(inst.keys.pushReady(0))) === 0,
    15_000,
    "the webhook deliveries settled",
  );
  const list = await rpc(gateway.url, "ListTaskPushNotificationConfigs", { taskId: victimTask }, { key: victim.key });
  bodies.push(JSON.stringify(list.body));
  await Bun.sleep(1100); // the gateway keeps a key lookup for at most one second: the revocation is now seen
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await hook?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

const paramsFor = (taskId: string): Record<string, unknown> => ({
  SendMessage: { message: message("resume it", { taskId }) },
  SendStreamingMessage: { message: message("resume it", { taskId }) },
  GetTask: { id: taskId },
  ListTasks: {},
  CancelTask: { id: taskId },
  SubscribeToTask: { id: taskId },
  CreateTaskPushNotificationConfig: { taskId, url: `http://127.0.0.1:${hook.port}/other` },
  GetTaskPushNotificationConfig: { taskId, id: taskId },
  ListTaskPushNotificationConfigs: { taskId },
  DeleteTaskPushNotificationConfig: { taskId, id: taskId },
  GetExtendedAgentCard: {},
});

interface Seen {
  status: number;
  code: number | undefined;
  reason: string | undefined;
  result: unknown;
  text: string;
}

async function call(method: string, params: unknown, headers: Record<string, string>): Promise<Seen> {
  const response = await fetch(`${gateway.url}/a2a/echo`, {
    method: "POST",
    signal: AbortSignal.timeout(10_000),
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await response.text();
  const json = response.headers.get("content-type")?.includes("text/event-stream")
    ? (/^data: (.*)$/m.exec(text)?.[1] ?? "{}")
    : text;
  // biome-ignore lint/suspicious/noExplicitAny: an arbitrary JSON-RPC answer
  const body = JSON.parse(json) as any;
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const info = body.error?.data?.find((d: any) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
  return { status: response.status, code: body.error?.code, reason: info?.reason, result: body.result, text };
}

test("every method × every credential failure: the documented answer, nothing stored", async () => {
  const before = await keysUnder(redis, inst.keys.prefix);
  const taskBefore = await redis.hgetall(inst.keys.task(0, victimTask));
  const cases: Record<string, Record<string, string>> = {
    "no credentials": {},
    "bad key": { Authorization: "Bearer a2a_not-a-key-at-all" },
    "revoked key": { Authorization: `Bearer ${keys.revoked}` },
    "profile not allowed": { Authorization: `Bearer ${keys.forbidden}` },
    "other client's key": { Authorization: `Bearer ${keys.attacker}` },
  };
  const wrong: string[] = [];
  let answered = 0;
  for (const [name, headers] of Object.entries(cases)) {
    for (const [method, params] of Object.entries(paramsFor(victimTask))) {
      const seen = await call(method, params, headers);
      bodies.push(seen.text);
      answered += 1;
      const expected =
        name === "profile not allowed"
          ? { status: 403, code: -32000, reason: "PERMISSION_DENIED" }
          : name !== "other client's key"
            ? { status: 401, code: -32000, reason: "UNAUTHENTICATED" }
            : method === "ListTasks"
              ? { status: 200, code: undefined, reason: undefined }
              : method === "GetExtendedAgentCard"
                ? { status: 200, code: -32004, reason: "UNSUPPORTED_OPERATION" }
                : { status: 200, code: -32001, reason: "TASK_NOT_FOUND" };
      const got = { status: seen.status, code: seen.code, reason: seen.reason };
      if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${name} ${method}: ${JSON.stringify(got)}`);
      if (method === "ListTasks" && seen.result && seen.text.includes(victimTask)) wrong.push(`${name} lists it`);
    }
  }
  expect(wrong).toEqual([]);
  expect(await keysUnder(redis, inst.keys.prefix)).toEqual(before);
  expect(await redis.hgetall(inst.keys.task(0, victimTask))).toEqual(taskBefore);
  figures("access", { requests: answered, wrongAnswers: 0, keysWritten: 0 });
}, 60_000);

test("API keys and webhook credentials appear in no log line and no response", async () => {
  const secrets = [...Object.values(keys), CREDENTIALS, TOKEN];
  const logs = [...gateway.lines, ...work.lines];
  expect(logs.some((line) => /"level":20/.test(line))).toBe(true); // debug lines were captured
  for (const secret of secrets) {
    expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    const leakingBodies = bodies.filter((body) => body.includes(secret) && secret !== TOKEN);
    expect(leakingBodies).toEqual([]);
  }
  // The credentials reached the webhook itself (so the actors did hold them while they logged).
  expect(hook.requests.some((r) => r.headers.authorization === `Bearer ${CREDENTIALS}`)).toBe(true);
  figures("access-secrets", { logLines: logs.length, secretsChecked: secrets.length, leaks: 0 });
}, 30_000);
