// A Redis on the same host over its Unix socket (redis.url unix:///…/redis.sock): `start` serves with it instead of
// embedding a redis-server of its own, a blocking and a streaming SendMessage come back completed by a real actor, and
// every connection of the installation (the gateway's, its journal tail's, the actors') is on the socket, none on TCP.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { startRedis, type TestRedis, testPrefix } from "../../support/redis.ts";
import { openStream } from "../../support/sse-client.ts";
import { tempDir } from "../../support/temp-dir.ts";

const root = join(import.meta.dir, "../../..");

let redis: TestRedis;
let child: ChildProcess;
let exited: Promise<number | null>;
let out = "";
let url = "";
let key = "";

beforeAll(async () => {
  redis = await startRedis({ unixSocket: true });
  child = spawn(process.execPath, [join(root, "src/cli.ts"), "start", "--port", "0", "--actors", "1"], {
    cwd: tempDir("a2a-unix-"),
    env: {
      ...process.env,
      A2A_REDIS_URL: redis.socketUrl,
      A2A_REDIS_KEY_PREFIX: testPrefix(),
      A2A_CONFIG: "",
      A2A_LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", () => {});
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  const ended = exited.then(() => "exited" as const);
  const printed = (async () => {
    while (!/demo client key/.test(out)) await Bun.sleep(50);
    return "printed" as const;
  })();
  expect(await Promise.race([printed, ended])).toBe("printed");
  url = /serving on (http:\/\/\S+)/.exec(out)?.[1] ?? "";
  key = /demo client key \(shown once\): (\S+)/.exec(out)?.[1] ?? "";
}, 60_000);

afterAll(async () => {
  child?.kill("SIGTERM");
  await exited;
  await redis?.stop();
});

const say = (messageId: string, text: string) => ({ message: { messageId, role: "ROLE_USER", parts: [{ text }] } });

function post(method: string, params: unknown): Promise<Response> {
  return fetch(`${url}/a2a/echo`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "a2a-version": "1.0", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
}

test("start uses the Redis at the socket and serves a blocking SendMessage through a real actor", async () => {
  expect(out).not.toContain("embedded redis-server");
  const answer = (await (await post("SendMessage", say("m-unix-1", "over the socket"))).json()) as {
    result?: { task?: { status: { state: string }; artifacts?: { parts: { text?: string }[] }[] } };
  };
  expect(answer.result?.task?.status.state).toBe("TASK_STATE_COMPLETED");
  expect(answer.result?.task?.artifacts?.[0]?.parts[0]?.text).toBe("over the socket");
}, 60_000);

test("a streamed SendMessage ends with the task completed", async () => {
  const stream = await openStream(url, "SendStreamingMessage", say("m-unix-2", "streamed"), { key });
  expect(stream.contentType).toContain("text/event-stream");
  await stream.closed;
  const states = stream.results.map((result) => result.task?.status?.state ?? result.statusUpdate?.status?.state);
  expect(states.filter(Boolean).at(-1)).toBe("TASK_STATE_COMPLETED");
}, 60_000);

test("every connection of the installation is on the socket", async () => {
  const admin = redis.client();
  const socketPath = new URL(redis.socketUrl ?? "").pathname;
  const clients = (await admin.client("LIST")) as string;
  const ours = clients
    .trim()
    .split("\n")
    .map((line) => ({ name: /\bname=(\S*)/.exec(line)?.[1] ?? "", laddr: /\bladdr=(\S*)/.exec(line)?.[1] ?? "" }))
    .filter((client) => client.name.startsWith("a2a-"));
  const names = new Set(ours.map((client) => client.name));
  // the gateway's and an actor's connections at least, whatever others are open at this moment
  expect(names.has("a2a-gateway")).toBe(true);
  expect([...names].some((name) => name.startsWith("a2a-actor"))).toBe(true);
  for (const client of ours)
    expect({ name: client.name, on: client.laddr }).toEqual({ name: client.name, on: `${socketPath}:0` });
});
