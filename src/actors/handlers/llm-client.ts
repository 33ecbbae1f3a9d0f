// A minimal OpenAI-compatible chat-completions client: streaming (`stream: true`) text deltas and tool calls.
// The API key is held privately and sent only in the Authorization header; errors never include it.
import type { LlmConfig } from "../../config/index.ts";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ChatTool[] | undefined;
  signal: AbortSignal;
  /** Called with each text delta as it streams in, in order. */
  onText?: ((delta: string) => Promise<void>) | undefined;
}

export interface ChatReply {
  content: string;
  toolCalls: ChatToolCall[];
  finishReason: string;
}

export interface LlmClient {
  readonly model: string;
  chat(request: ChatRequest): Promise<ChatReply>;
}

export class LlmRequestError extends Error {
  override readonly name = "LlmRequestError";
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`chat completion failed with HTTP ${status}: ${detail.slice(0, 300)}`);
  }
}

interface StreamChunk {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
}

/** Yields the `data:` payloads of a server-sent-events body, one per event. */
async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      newline = buffer.indexOf("\n");
    }
  }
  if (data.length > 0) yield data.join("\n");
}

export class OpenAiCompatibleClient implements LlmClient {
  readonly model: string;
  readonly #apiKey: string | undefined;

  constructor(
    private readonly config: LlmConfig,
    apiKey: string | undefined,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.model = config.model;
    this.#apiKey = apiKey;
  }

  async chat(request: ChatRequest): Promise<ChatReply> {
    const url = `${this.config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
    const body: Record<string, unknown> = { model: this.model, messages: request.messages, stream: true };
    if (this.config.temperature !== undefined) body.temperature = this.config.temperature;
    if (request.tools && request.tools.length > 0) body.tools = request.tools;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
    if (this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    const response = await this.fetchImpl(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal: request.signal,
    });
    if (!response.ok || !response.body) throw new LlmRequestError(response.status, await response.text());
    let content = "";
    let finishReason = "stop";
    const calls: ChatToolCall[] = [];
    for await (const data of sseData(response.body)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data) as StreamChunk;
      for (const choice of chunk.choices ?? []) {
        const delta = choice.delta;
        if (delta?.content) {
          content += delta.content;
          await request.onText?.(delta.content);
        }
        for (const part of delta?.tool_calls ?? []) {
          const index = part.index ?? calls.length;
          calls[index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
          const call = calls[index];
          if (part.id) call.id = part.id;
          if (part.function?.name) call.function.name += part.function.name;
          if (part.function?.arguments) call.function.arguments += part.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    }
    const toolCalls = calls.filter((call) => call !== undefined && call.function.name !== "");
    return { content, toolCalls, finishReason };
  }
}
