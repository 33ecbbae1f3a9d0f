// The handler API without Redis: registries and author modules, the context a handler gets, and the llm agent loop
// against a scripted model.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OutputSink } from "../../../src/actors/emit-gate.ts";
import {
  builtinHandlers,
  builtinTools,
  HandlerModuleError,
  loadHandlerModules,
} from "../../../src/actors/handlers/builtins.ts";
import { createHandlerContext } from "../../../src/actors/handlers/context.ts";
import { defineHandler, HandlerFailure, HandlerRegistry, textOf } from "../../../src/actors/handlers/handler-api.ts";
import { llmHandler } from "../../../src/actors/handlers/llm.ts";
import type { ChatReply, ChatRequest, LlmClient } from "../../../src/actors/handlers/llm-client.ts";
import type { Profile } from "../../../src/config/index.ts";
import { loadConfig } from "../../../src/config/index.ts";

const dir = mkdtempSync(join(tmpdir(), "a2a-handlers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function profile(extra: Record<string, unknown> = {}): Profile {
  const file = join(dir, `config-${Math.random()}.json`);
  const base = {
    name: "p",
    handler: "llm",
    description: "You are terse.",
    skill: { id: "s", name: "S", description: "d" },
  };
  writeFileSync(file, JSON.stringify({ profiles: [{ ...base, ...extra }] }));
  const [loaded] = loadConfig({ file, env: {} }).profiles;
  if (!loaded) throw new Error("no profile");
  return loaded;
}

function recordingSink() {
  const out: string[] = [];
  const sink: OutputSink = {
    text: async (delta) => void out.push(`text:${delta}`),
    artifact: async (artifact) => void out.push(`artifact:${artifact.artifactId}`),
    progress: async (message) => void out.push(`progress:${message}`),
    finish: async () => void out.push("finish"),
    failureMessage: async (message) => message,
  };
  return { out, sink };
}

function context(p: Profile, llm: LlmClient | undefined, refusals: string[] = []) {
  const { out, sink } = recordingSink();
  const controller = new AbortController();
  const built = createHandlerContext({
    taskId: "t1",
    contextId: "c1",
    history: [
      { messageId: "m1", role: "ROLE_USER", parts: [{ text: "first" }] },
      { messageId: "m2", role: "ROLE_AGENT", parts: [{ text: "which one?" }] },
      { messageId: "m3", role: "ROLE_USER", parts: [{ text: "the " }, { text: "second" }] },
    ],
    profile: p,
    attempt: 1,
    signal: controller.signal,
    sink,
    llm,
    tools: builtinTools(),
    workspace: undefined,
    recordRefusal: async (tool) => void refusals.push(tool),
  });
  return { ...built, out, controller };
}

test("the registry holds the built-ins and author handlers; author modules register every defineHandler export", async () => {
  expect(builtinHandlers().names()).toEqual(["echo", "faults", "llm", "noop"]);
  const module = join(dir, "support.ts");
  writeFileSync(
    module,
    `import { defineHandler } from ${JSON.stringify(new URL("../../../src/actors/index.ts", import.meta.url).pathname)};
     export const support = defineHandler("support", async (ctx) => { await ctx.emit.text("hi"); });
     export const billing = defineHandler("billing", async () => {});
     export const notAHandler = 42;`,
  );
  const registry = new HandlerRegistry();
  expect((await loadHandlerModules([module], registry)).sort()).toEqual(["billing", "support"]);
  expect(registry.names()).toEqual(["billing", "support"]);
  const empty = join(dir, "empty.ts");
  writeFileSync(empty, "export const x = 1;");
  await expect(loadHandlerModules([empty], registry)).rejects.toBeInstanceOf(HandlerModuleError);
  await expect(loadHandlerModules([join(dir, "missing.ts")], registry)).rejects.toBeInstanceOf(HandlerModuleError);
  expect(registry.register("inline", async () => {}).get("inline")).toBeFunction();
  expect(defineHandler("x", async () => {}).name).toBe("x");
});

test("the context: history, latest input, identity, resources, interrupts; emits stop after an abort", async () => {
  const p = profile({ identity: "svc-bot", resources: ["kb:faq"], tools: ["clock"] });
  const { ctx, requested, out, controller } = context(p, undefined);
  expect(ctx.messages).toHaveLength(3);
  expect(textOf(ctx.input)).toBe("the second");
  expect([ctx.identity, ctx.resources, ctx.attempt, ctx.llm, ctx.workspace]).toEqual([
    "svc-bot",
    ["kb:faq"],
    1,
    undefined,
    undefined,
  ]);
  expect(requested()).toBeUndefined();
  expect(ctx.requireInput("Which city?")).toEqual({ state: "TASK_STATE_INPUT_REQUIRED", message: "Which city?" });
  expect(requested()).toEqual({ state: "TASK_STATE_INPUT_REQUIRED", message: "Which city?" });
  expect(ctx.requireAuth("Sign in")).toEqual({ state: "TASK_STATE_AUTH_REQUIRED", message: "Sign in" });
  await ctx.emit.text("a");
  controller.abort(new Error("canceled"));
  await expect(ctx.emit.text("b")).rejects.toThrow("canceled");
  expect(out).toEqual(["text:a"]);
});

test("an emit the handler does not await never becomes an unhandled rejection, which would end its actor", async () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", record);
  try {
    const { ctx, controller } = context(profile(), undefined);
    controller.abort(new Error("canceled"));
    const emits = [ctx.emit.text("b"), ctx.emit.artifact({ artifactId: "x", parts: [] }), ctx.emit.progress("p")];
    // a timer runs after the runtime has reported the turn's unhandled rejections
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    // and a handler that does await an emit still learns of the refusal
    for (const emitted of emits) await expect(emitted).rejects.toThrow("canceled");
  } finally {
    process.off("unhandledRejection", record);
  }
});

/** A model that answers from a script, recording each request. */
function scriptedModel(replies: ((request: ChatRequest) => Promise<ChatReply>)[]) {
  const requests: ChatRequest[] = [];
  const llm: LlmClient = {
    model: "fake",
    async chat(request) {
      requests.push({ ...request, messages: structuredClone(request.messages) });
      const next = replies.shift();
      if (!next) throw new Error("no more replies");
      return await next(request);
    },
  };
  return { llm, requests };
}

test("llm: streams text, runs the allowed tool, refuses another, feeds results back and finishes", async () => {
  const { llm, requests } = scriptedModel([
    async (request) => {
      await request.onText?.("Checking. ");
      return {
        content: "Checking. ",
        finishReason: "tool_calls",
        toolCalls: [
          { id: "a", type: "function", function: { name: "clock", arguments: "{}" } },
          { id: "b", type: "function", function: { name: "shell", arguments: '{"cmd":"rm"}' } },
        ],
      };
    },
    async (request) => {
      await request.onText?.("Done.");
      return { content: "Done.", finishReason: "stop", toolCalls: [] };
    },
  ]);
  const refusals: string[] = [];
  const { ctx, out } = context(
    profile({ tools: ["clock"], llm: { baseUrl: "http://x", model: "m", maxSteps: 3 } }),
    llm,
    refusals,
  );
  expect(await llmHandler.run(ctx)).toBeUndefined();
  expect(out).toEqual(["text:Checking. ", "text:Done."]);
  expect(refusals).toEqual(["shell"]);
  expect(requests[0]?.messages).toEqual([
    { role: "system", content: "You are terse." },
    { role: "user", content: "first" },
    { role: "assistant", content: "which one?" },
    { role: "user", content: "the second" },
  ]);
  expect(requests[0]?.tools?.map((tool) => tool.function.name)).toEqual(["clock"]);
  const results = requests[1]?.messages.slice(-2) ?? [];
  expect(results[0]).toMatchObject({ role: "tool", tool_call_id: "a" });
  expect(JSON.parse((results[0] as { content: string }).content).now).toBeString();
  expect(results[1]).toEqual({
    role: "tool",
    tool_call_id: "b",
    content: JSON.stringify({ error: 'tool "shell" is not allowed for this profile' }),
  });
});

test("llm: bounded by maxSteps; no llm configured is a HandlerFailure", async () => {
  const loop = async (): Promise<ChatReply> => ({
    content: "",
    finishReason: "tool_calls",
    toolCalls: [{ id: "a", type: "function", function: { name: "clock", arguments: "" } }],
  });
  const { llm, requests } = scriptedModel([loop, loop, loop]);
  const { ctx } = context(profile({ tools: ["clock"], llm: { baseUrl: "http://x", model: "m", maxSteps: 2 } }), llm);
  await expect(llmHandler.run(ctx)).rejects.toBeInstanceOf(HandlerFailure);
  expect(requests).toHaveLength(2);
  const none = context(profile(), undefined);
  await expect(llmHandler.run(none.ctx)).rejects.toThrow("no LLM configured");
});
