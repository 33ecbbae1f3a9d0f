// The `llm` handler in a real actor against a fake OpenAI-compatible server on loopback: the reply streams into the
// task, one allowed tool call runs and its result goes back to the model, a disallowed tool is refused (in the task).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import {
  accept,
  type CliProcess,
  cleanup,
  events,
  type Installation,
  installation,
  killStarted,
  liveWorkers,
  startCli,
  taskInState,
} from "./harness.ts";

interface ChatBody {
  model: string;
  stream: boolean;
  messages: { role: string; content: string | null; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
}

const API_KEY = "sk-test-a2a-llm-0123456789";
let server: TestRedis;
let llm: Server<undefined>;
let inst: Installation;
let work: CliProcess;
const requests: { authorization: string | null; body: ChatBody }[] = [];

function sse(chunks: unknown[]): Response {
  const body = `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

const delta = (content: string) => ({ choices: [{ index: 0, delta: { content } }] });

/** Step 1: some text, then a call to `clock` (allowed) and `shell` (not allowed). Step 2: the answer, streamed. */
function answer(body: ChatBody): Response {
  const toolResults = body.messages.filter((m) => m.role === "tool");
  if (toolResults.length === 0) {
    return sse([
      delta("Let me "),
      delta("check. "),
      {
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: "call-1", type: "function", function: { name: "clock", arguments: "" } },
                { index: 1, id: "call-2", type: "function", function: { name: "shell", arguments: '{"cmd":' } },
              ],
            },
          },
        ],
      },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, function: { arguments: '"ls"}' } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
    ]);
  }
  const now = JSON.parse(toolResults[0]?.content ?? "{}").now as string;
  return sse([
    delta("It is "),
    delta(now),
    delta(" now."),
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
  ]);
}

beforeAll(async () => {
  server = await startRedis();
  llm = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (request.method !== "POST" || url.pathname !== "/v1/chat/completions")
        return new Response("", { status: 404 });
      const body = (await request.json()) as ChatBody;
      requests.push({ authorization: request.headers.get("authorization"), body });
      return answer(body);
    },
  });
  inst = await installation(server, {
    profiles: [
      {
        name: "assistant",
        handler: "llm",
        description: "You are a helpful assistant.",
        skill: { id: "assist", name: "Assistant", description: "Answers questions." },
        llm: {
          baseUrl: `http://127.0.0.1:${llm.port}/v1`,
          model: "fake-model",
          apiKeyEnv: "TEST_LLM_KEY",
          maxSteps: 4,
        },
        tools: ["clock"],
      },
    ],
    env: { TEST_LLM_KEY: API_KEY },
  });
  work = startCli(inst, ["work", "--actors", "1"]);
  await liveWorkers(inst, 1);
});
afterAll(async () => {
  work.child.kill("SIGTERM");
  await work.exited;
  killStarted();
  cleanup(inst);
  llm.stop(true);
  await server.stop();
});

test("llm streams its reply, runs the allowed tool call, and refuses the disallowed one", async () => {
  const taskId = await accept(inst, "What time is it?", "assistant");
  const done = await taskInState(inst, taskId, "TASK_STATE_COMPLETED");

  // Two model calls, with the key from the variable the profile names, offering only the allowed tool.
  expect(requests).toHaveLength(2);
  expect(requests.map((r) => r.authorization)).toEqual([`Bearer ${API_KEY}`, `Bearer ${API_KEY}`]);
  const [first, second] = requests.map((r) => r.body);
  expect(first).toMatchObject({ model: "fake-model", stream: true });
  expect(first?.tools?.map((t) => t.function.name)).toEqual(["clock"]);
  expect(first?.messages).toEqual([
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "What time is it?" },
  ]);
  const results = second?.messages.filter((m) => m.role === "tool") ?? [];
  expect(results.map((m) => m.tool_call_id)).toEqual(["call-1", "call-2"]);
  const now = JSON.parse(results[0]?.content ?? "{}").now as string;
  expect(Math.abs(Date.parse(now) - Date.now())).toBeLessThan(10_000);
  expect(JSON.parse(results[1]?.content ?? "{}")).toEqual({ error: 'tool "shell" is not allowed for this profile' });

  // The reply streamed as chunks of one artifact, and the stored artifact holds the whole text.
  const reply = `Let me check. It is ${now} now.`;
  expect(done.artifacts).toEqual([{ artifactId: "response-1", name: "response", parts: [{ text: reply }] }]);
  const chunks = (await events(inst, taskId)).flatMap((e) => (e.event.artifactUpdate ? [e.event.artifactUpdate] : []));
  // deltas asked while a write is in flight share one update, so the count depends on timing; the tool call between
  // the two completions separates their text at least
  expect(chunks.length).toBeGreaterThanOrEqual(2);
  expect(chunks.map((c) => c.artifact.parts.map((p) => ("text" in p ? p.text : "")).join("")).join("")).toBe(reply);
  expect(chunks[0]?.append).toBeUndefined();
  expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
  expect(chunks.at(-1)?.lastChunk).toBe(true);

  // The refusal is visible in the task.
  expect(done.history.map((m) => m.parts.map((p) => ("text" in p ? p.text : "")).join(""))).toContain(
    'Tool "shell" is not allowed for this agent; the call was refused',
  );
  // The key never reaches the log.
  expect(work.lines.some((line) => line.includes(API_KEY))).toBe(false);
});
