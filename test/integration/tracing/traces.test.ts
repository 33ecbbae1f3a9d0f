// Traces across the hop: a real gateway and real workers export over OTLP/HTTP to a loopback receiver. A blocking
// SendMessage (JSON-RPC) and a streaming one (HTTP+JSON) each make one trace in which the gateway's SERVER span, the
// worker's run span and the handler's spans share the trace id; a client's traceparent is the root; a run reclaimed
// after its worker was killed continues the same trace.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../../support/otlp-receiver.ts";
import { startRedis, type TestRedis } from "../../support/redis.ts";
import { isRunning, waitFor } from "../actors/harness.ts";
import { message, rpc } from "../gateway/harness.ts";
import {
  ECHO_PROFILE,
  FAULTS_PROFILE,
  type Installation,
  installation,
  type Running,
  taskInState,
} from "../multi/installation.ts";

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;
const TRACED_PROFILE = {
  name: "traced",
  handler: "traced",
  description: "Answers with the text it got, in a span of its own.",
  skill: { id: "traced", name: "Traced", description: "Answers with the text it got." },
};

let dir: string;
let server: TestRedis;
let receiver: OtlpReceiver;
let inst: Installation;
let gateway: Running & { url: string };
let key: string;
let llm: ReturnType<typeof Bun.serve>;
let hooks: ReturnType<typeof Bun.serve>;
/** The `traceparent` of every webhook the loopback receiver got. */
const hookTraceparents: string[] = [];
const modelBodies: { stream_options?: { include_usage?: boolean } }[] = [];

/** A fake OpenAI-compatible endpoint: first a call of the `clock` tool, then the answer; tokens in a last chunk. */
function fakeModel(): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = (await request.json()) as { messages: { role: string }[]; stream_options?: object };
      modelBodies.push(body);
      const called = body.messages.some((m) => m.role === "tool");
      const model = "fake-model-2026";
      const chunks = called
        ? [
            { model, choices: [{ index: 0, delta: { content: "It is late." } }] },
            { model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
            { model, choices: [], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } },
          ]
        : [
            {
              model,
              choices: [
                {
                  index: 0,
                  delta: { tool_calls: [{ index: 0, id: "call-1", type: "function", function: { name: "clock" } }] },
                },
              ],
            },
            { model, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
            { model, choices: [], usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 } },
          ];
      const text = `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
      return new Response(text, { headers: { "content-type": "text/event-stream" } });
    },
  });
}

beforeAll(async () => {
  receiver = startOtlpReceiver();
  llm = fakeModel();
  hooks = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      await request.text();
      hookTraceparents.push(request.headers.get("traceparent") ?? "");
      return new Response(null, { status: 204 });
    },
  });
  const assistant = {
    name: "assistant",
    handler: "llm",
    description: "You are a helpful assistant.",
    skill: { id: "assist", name: "Assistant", description: "Answers questions." },
    llm: { baseUrl: `http://127.0.0.1:${llm.port}/v1`, model: "fake-model", apiKeyEnv: "TRACES_LLM_KEY", maxSteps: 4 },
    tools: ["clock"],
  };
  dir = mkdtempSync(join(tmpdir(), "a2a-traces-"));
  const config = join(dir, "config.json");
  const handler = new URL("./traced-handler.ts", import.meta.url).pathname;
  writeFileSync(
    config,
    JSON.stringify({
      profiles: [ECHO_PROFILE, FAULTS_PROFILE, TRACED_PROFILE, assistant],
      handlers: [handler],
      push: { allowHosts: [`127.0.0.1:${hooks.port}`] },
    }),
  );
  server = await startRedis();
  inst = await installation({
    redisUrl: server.url,
    env: {
      A2A_CONFIG: config,
      A2A_TRACING_ENABLED: "true",
      A2A_TRACING_ENDPOINT: receiver.url,
      A2A_TRACING_SERVICE_NAME: "traces-test",
      // The batch processor exports every 100 ms instead of every 5 s (the SDK reads this variable itself).
      OTEL_BSP_SCHEDULE_DELAY: "100",
      TRACES_LLM_KEY: "sk-test-traces",
    },
  });
  [gateway] = await Promise.all([inst.gateway(), inst.work("bun", 2)]);
  ({ key } = await inst.client());
}, 60_000);

afterAll(async () => {
  await inst?.close();
  await server?.stop();
  receiver?.stop();
  llm?.stop(true);
  hooks?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 30_000);

function hex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

function inTrace(traceId: string): ReceivedSpan[] {
  return receiver.spans.filter((span) => span.traceId === traceId);
}

/** Waits until the trace holds a span matching each predicate; returns them in order. */
async function spansOf<K extends string>(
  traceId: string,
  wanted: Record<K, (span: ReceivedSpan) => boolean>,
): Promise<Record<K, ReceivedSpan>> {
  return await waitFor(
    async () => {
      const spans = inTrace(traceId);
      const found: Partial<Record<K, ReceivedSpan>> = {};
      for (const name of Object.keys(wanted) as K[]) {
        const span = spans.find(wanted[name]);
        if (span === undefined) return undefined;
        found[name] = span;
      }
      return found as Record<K, ReceivedSpan>;
    },
    20_000,
    () =>
      `spans ${Object.keys(wanted).join(", ")} in trace ${traceId}; received: ` +
      JSON.stringify(inTrace(traceId).map((span) => [span.name, span.spanId, span.parentSpanId])) +
      ` refused: ${receiver.refused.join("; ")}`,
  );
}

const named = (name: string) => (span: ReceivedSpan) => span.name === name;

describe("one trace from the client's request to the worker's handler", () => {
  test("a blocking SendMessage (JSON-RPC) with the client's traceparent: the client's span is the root", async () => {
    const traceId = hex(16);
    const clientSpanId = hex(8);
    const sent = message("traced hello");
    const answer = await rpc(
      gateway.url,
      "SendMessage",
      { message: sent },
      { key, profile: "traced", headers: { traceparent: `00-${traceId}-${clientSpanId}-01` } },
    );
    const task = answer.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");

    const spans = await spansOf(traceId, {
      server: named("SendMessage"),
      wait: named("a2a.wait"),
      run: named("a2a.run"),
      claim: named("a2a.claim"),
      leg: named("invoke_agent traced"),
      own: named("look up the answer"),
      transition: named("a2a.transition"),
    });
    const { server: request, wait, run, claim, leg, own, transition } = spans;
    expect(request?.kind).toBe(SERVER);
    expect(request?.parentSpanId).toBe(clientSpanId);
    expect(request?.service).toBe("traces-test");
    expect(request?.attributes).toMatchObject({
      "a2a.method.name": "SendMessage",
      "a2a.protocol.version": "1.0",
      "a2a.protocol.binding": "JSONRPC",
      "a2a.message.id": sent.messageId,
      "a2a.task.id": task.id,
      "a2a.task.state": "TASK_STATE_COMPLETED",
      "gen_ai.conversation.id": task.contextId,
      "gen_ai.agent.name": "traced",
    });
    expect(request?.attributes["error.type"]).toBeUndefined();
    expect(wait?.parentSpanId).toBe(request?.spanId);
    expect(wait?.attributes["a2a.wait.outcome"]).toBe("met");
    // The worker's run continues the request's trace as a child of its SERVER span.
    expect(run?.kind).toBe(CONSUMER);
    expect(run?.parentSpanId).toBe(request?.spanId);
    expect(run?.attributes).toMatchObject({
      "a2a.task.id": task.id,
      "a2a.run.attempt": 1,
      "a2a.run.outcome": "completed",
      "a2a.task.state": "TASK_STATE_COMPLETED",
    });
    expect(claim?.parentSpanId).toBe(run?.spanId);
    expect(leg?.parentSpanId).toBe(run?.spanId);
    expect(leg?.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "traced" });
    expect(own?.parentSpanId).toBe(leg?.spanId);
    expect(transition?.parentSpanId).toBe(run?.spanId);
  });

  test("a streaming message (HTTP+JSON) without a traceparent: the SERVER span is the root", async () => {
    const sent = message("traced stream");
    const response = await fetch(`${gateway.url}/a2a/traced/message:stream`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "A2A-Version": "1.0", "Content-Type": "application/a2a+json" },
      body: JSON.stringify({ message: sent }),
    });
    expect(response.status).toBe(200);
    // The stream closes at COMPLETED.
    expect(await response.text()).toContain("TASK_STATE_COMPLETED");
    const server = await waitFor(
      async () =>
        receiver.spans.find(
          (span) => span.name === "SendStreamingMessage" && span.attributes["a2a.message.id"] === sent.messageId,
        ),
      20_000,
      "the SendStreamingMessage SERVER span",
    );
    expect(server.parentSpanId).toBe("");
    const taskId = server.attributes["a2a.task.id"];
    expect(typeof taskId).toBe("string");
    expect(server.attributes).toMatchObject({
      "a2a.method.name": "SendStreamingMessage",
      "a2a.protocol.binding": "HTTP+JSON",
      "gen_ai.agent.name": "traced",
    });
    expect(typeof server.attributes["gen_ai.conversation.id"]).toBe("string");
    const { stream, run, leg, own } = await spansOf(server.traceId, {
      stream: named("a2a.stream"),
      run: named("a2a.run"),
      leg: named("invoke_agent traced"),
      own: named("look up the answer"),
    });
    expect(stream?.parentSpanId).toBe(server.spanId);
    expect(stream?.attributes["a2a.stream.end"]).toBe("done");
    expect(run?.parentSpanId).toBe(server.spanId);
    expect(run?.attributes["a2a.task.id"]).toBe(taskId);
    expect(leg?.parentSpanId).toBe(run?.spanId);
    expect(own?.parentSpanId).toBe(leg?.spanId);
  });

  test("a follow-up to an INPUT_REQUIRED task runs its next leg in the follow-up's trace", async () => {
    const [first, second] = [hex(16), hex(16)];
    const asked = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("[input] hello") },
      { key, headers: { traceparent: `00-${first}-${hex(8)}-01` } },
    );
    const task = asked.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const followUpSpanId = hex(8);
    const answered = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("more", { taskId: task.id, contextId: task.contextId }) },
      { key, headers: { traceparent: `00-${second}-${followUpSpanId}-01` } },
    );
    expect(answered.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    const before = await spansOf(first, { run: named("a2a.run") });
    expect(before.run.attributes["a2a.run.outcome"]).toBe("input_required");
    const after = await spansOf(second, { server: named("SendMessage"), run: named("a2a.run") });
    expect(after.server.parentSpanId).toBe(followUpSpanId);
    expect(after.server.attributes["a2a.task.id"]).toBe(task.id);
    expect(after.run.parentSpanId).toBe(after.server.spanId);
    expect(after.run.attributes).toMatchObject({ "a2a.task.id": task.id, "a2a.run.outcome": "completed" });
  });

  test("a run reclaimed after its worker was killed continues the same trace", async () => {
    const traceId = hex(16);
    const clientSpanId = hex(8);
    const answer = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("[sleep 600000] killed"), configuration: { returnImmediately: true } },
      { key, profile: "faults", headers: { traceparent: `00-${traceId}-${clientSpanId}-01` } },
    );
    const taskId: string = answer.body.result.task.id;
    await taskInState(gateway.url, key, taskId, "TASK_STATE_WORKING", 20_000, "faults");
    const owner = await inst.redis.hget(inst.keys.run(0, taskId), "owner");
    const pid = Number(/-(\d+)$/.exec(owner ?? "")?.[1]);
    expect(isRunning(pid)).toBe(true);
    // The first attempt's claim is exported before the kill (its run span dies with the process).
    await spansOf(traceId, { claim: named("a2a.claim") });
    process.kill(pid, "SIGKILL");
    // A live actor reclaims the run once its lease expires and runs it again (it sleeps again: the test cancels it).
    const run = inst.keys.run(0, taskId);
    await waitFor(
      async () => (await inst.redis.hget(run, "tries")) === "2" && (await inst.redis.hget(run, "owner")) !== owner,
      30_000,
      "the run reclaimed by another actor",
    );
    const cancel = await rpc(gateway.url, "CancelTask", { id: taskId }, { key, profile: "faults" });
    expect(cancel.body.result.status.state).toBe("TASK_STATE_CANCELED");
    const { server: request, retry } = await spansOf(traceId, {
      server: named("SendMessage"),
      retry: (span) => span.name === "a2a.run" && span.attributes["a2a.run.attempt"] === 2,
    });
    expect(request?.parentSpanId).toBe(clientSpanId);
    expect(retry?.parentSpanId).toBe(request?.spanId);
    expect(retry?.attributes["a2a.run.outcome"]).toBe("canceled");
    expect(retry?.attributes["a2a.task.id"]).toBe(taskId);
  }, 60_000);

  test("the llm handler's model calls are GenAI client spans, its tool call an execute_tool span", async () => {
    const traceId = hex(16);
    const answer = await rpc(
      gateway.url,
      "SendMessage",
      { message: message("What time is it?") },
      { key, profile: "assistant", headers: { traceparent: `00-${traceId}-${hex(8)}-01` } },
    );
    expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    // While tracing, the model is asked for its token counts.
    expect(modelBodies.at(-1)?.stream_options).toEqual({ include_usage: true });
    const { leg, tool } = await spansOf(traceId, {
      leg: named("invoke_agent assistant"),
      tool: named("execute_tool clock"),
      second: (span) => span.name === "chat fake-model" && span.attributes["gen_ai.usage.input_tokens"] === 30,
    });
    const calls = inTrace(traceId).filter(named("chat fake-model"));
    expect(calls.map((span) => span.attributes)).toEqual([
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "fake-model",
        "gen_ai.response.model": "fake-model-2026",
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 7,
      },
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "fake-model",
        "gen_ai.response.model": "fake-model-2026",
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 30,
        "gen_ai.usage.output_tokens": 4,
      },
    ]);
    for (const call of calls) {
      expect(call.kind).toBe(CLIENT);
      expect(call.parentSpanId).toBe(leg?.spanId);
    }
    expect(tool?.parentSpanId).toBe(leg?.spanId);
    expect(tool?.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "clock" });
  });

  test("each webhook attempt is an a2a.push span in the task's trace, and the webhook carries its traceparent", async () => {
    const traceId = hex(16);
    const answer = await rpc(
      gateway.url,
      "SendMessage",
      {
        message: message("pushed"),
        configuration: { taskPushNotificationConfig: { url: `http://127.0.0.1:${hooks.port}/hook` } },
      },
      { key, headers: { traceparent: `00-${traceId}-${hex(8)}-01` } },
    );
    const task = answer.body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    const { server: request, push } = await spansOf(traceId, {
      server: named("SendMessage"),
      push: (span) => span.name === "a2a.push" && span.attributes["a2a.push.outcome"] === "delivered",
    });
    expect(push.kind).toBe(CLIENT);
    expect(push.parentSpanId).toBe(request.spanId);
    expect(push.attributes).toMatchObject({
      "a2a.task.id": task.id,
      "http.request.method": "POST",
      "server.address": "127.0.0.1",
      "http.response.status_code": 204,
    });
    expect(hookTraceparents).toContain(`00-${traceId}-${push.spanId}-01`);
  });
});
