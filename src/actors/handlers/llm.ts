// The `llm` handler: an agent loop against the profile's OpenAI-compatible endpoint. Text deltas stream to the task;
// tool calls run through the profile's allow-list and their results go back to the model, for at most llm.maxSteps calls.
import type { Message } from "../../protocol/index.ts";
import { defineHandler, HandlerFailure } from "./handler-api.ts";
import type { ChatMessage, ChatTool } from "./llm-client.ts";
import { ToolNotAllowedError } from "./tools.ts";

function chatHistory(system: string, messages: readonly Message[]): ChatMessage[] {
  const chat: ChatMessage[] = [{ role: "system", content: system }];
  for (const message of messages) {
    const text = message.parts
      .map((part) =>
        "text" in part && part.text !== undefined ? part.text : "data" in part ? JSON.stringify(part.data) : "",
      )
      .join("");
    if (text === "") continue;
    chat.push(message.role === "ROLE_USER" ? { role: "user", content: text } : { role: "assistant", content: text });
  }
  return chat;
}

function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const value: unknown = JSON.parse(text);
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const llmHandler = defineHandler("llm", async (ctx) => {
  const llm = ctx.llm;
  if (!llm) throw new HandlerFailure("This profile has no LLM configured");
  const maxSteps = ctx.profile.llm?.maxSteps ?? 8;
  const tools: ChatTool[] = ctx.tools.list().map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  const chat = chatHistory(ctx.profile.description, ctx.messages);
  for (let step = 1; step <= maxSteps; step++) {
    const reply = await llm.chat({
      messages: chat,
      tools,
      signal: ctx.signal,
      onText: (delta) => ctx.emit.text(delta),
    });
    if (reply.toolCalls.length === 0) return;
    chat.push({ role: "assistant", content: reply.content === "" ? null : reply.content, tool_calls: reply.toolCalls });
    for (const call of reply.toolCalls) {
      let result: unknown;
      try {
        result = await ctx.tools.call(call.function.name, parseArguments(call.function.arguments));
      } catch (error) {
        ctx.signal.throwIfAborted();
        result = { error: error instanceof ToolNotAllowedError ? error.message : `tool failed: ${errorText(error)}` };
      }
      chat.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  throw new HandlerFailure(`The agent reached its step limit (${maxSteps}) without an answer`);
});
