// The OpenAI-compatible client against a fake fetch: streamed text deltas in order, tool calls assembled from their
// streamed pieces, the key only in the Authorization header (none without a key, even with OPENAI_API_KEY set), HTTP
// errors without the key.
import { expect, test } from "bun:test";
import { LlmRequestError, OpenAiCompatibleClient } from "../../../src/actors/handlers/llm-client.ts";

const CONFIG = { baseUrl: "http://llm.test/v1/", model: "m-1", maxSteps: 4, temperature: 0.2 };

function sse(events: unknown[], split = 7): Response {
  const text = `${events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join("")}`;
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += split) controller.enqueue(bytes.slice(i, i + split));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

function fakeFetch(response: () => Response) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetchImpl = (async (url: string | URL, init: RequestInit) => {
    calls.push({ url: String(url), init });
    return response();
  }) as unknown as typeof fetch;
  return { calls, fetchImpl };
}

test("streams text deltas and assembles tool calls; sends model, tools, stream and the key", async () => {
  const { calls, fetchImpl } = fakeFetch(() =>
    sse([
      { choices: [{ delta: { content: "Hel" } }] },
      { choices: [{ delta: { content: "lo" } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, id: "c1", function: { name: "clo", arguments: "" } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { name: "ck", arguments: '{"tz":' } }] } }] },
      {
        choices: [
          { delta: { tool_calls: [{ index: 0, function: { arguments: '"UTC"}' } }] }, finish_reason: "tool_calls" },
        ],
      },
      "[DONE]",
    ]),
  );
  const client = new OpenAiCompatibleClient(CONFIG, "sk-secret", fetchImpl);
  const deltas: string[] = [];
  const tools = [{ type: "function" as const, function: { name: "clock", description: "time", parameters: {} } }];
  const reply = await client.chat({
    messages: [{ role: "user", content: "hi" }],
    tools,
    signal: new AbortController().signal,
    onText: async (delta) => {
      deltas.push(delta);
    },
  });
  expect(deltas).toEqual(["Hel", "lo"]);
  expect(reply).toEqual({
    content: "Hello",
    finishReason: "tool_calls",
    toolCalls: [{ id: "c1", type: "function", function: { name: "clock", arguments: '{"tz":"UTC"}' } }],
  });
  expect(calls[0]?.url).toBe("http://llm.test/v1/chat/completions");
  expect(new Headers(calls[0]?.init.headers).get("authorization")).toBe("Bearer sk-secret");
  expect(JSON.parse(String(calls[0]?.init.body))).toEqual({
    model: "m-1",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    temperature: 0.2,
    tools,
  });
});

test("no key: no Authorization header, not even OPENAI_API_KEY's; no tools: no tools field", async () => {
  process.env.OPENAI_API_KEY = "sk-from-the-environment";
  const { calls, fetchImpl } = fakeFetch(() =>
    sse([{ choices: [{ delta: { content: "ok" }, finish_reason: "stop" }] }]),
  );
  const { temperature: _, ...withoutTemperature } = CONFIG;
  const reply = await new OpenAiCompatibleClient(withoutTemperature, undefined, fetchImpl).chat({
    messages: [{ role: "user", content: "x" }],
    signal: new AbortController().signal,
  });
  expect(reply.content).toBe("ok");
  expect(new Headers(calls[0]?.init.headers).get("content-type")).toBe("application/json");
  expect(new Headers(calls[0]?.init.headers).has("authorization")).toBe(false);
  expect(JSON.parse(String(calls[0]?.init.body)).tools).toBeUndefined();
  delete process.env.OPENAI_API_KEY;
});

test("an HTTP error is an LlmRequestError with the status and never the key", async () => {
  const { fetchImpl } = fakeFetch(() => new Response('{"error":"bad key"}', { status: 401 }));
  const error = await new OpenAiCompatibleClient(CONFIG, "sk-secret", fetchImpl)
    .chat({ messages: [], signal: new AbortController().signal })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(LlmRequestError);
  expect((error as LlmRequestError).status).toBe(401);
  expect(String((error as Error).message)).not.toContain("sk-secret");
});
