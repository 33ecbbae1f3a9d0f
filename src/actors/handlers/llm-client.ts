// The chat client of the `llm` handler, on the `openai` library, for any OpenAI-compatible endpoint: streamed
// (`stream: true`) text deltas and tool calls. The key is held by the library, sent only in the Authorization header,
// and never part of an error.
import { SpanKind } from "@opentelemetry/api";
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { LlmConfig } from "../../config/index.ts";
import { attributes as A, inSpan, tracing } from "../../tracing/index.ts";

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
  /** The model that answered, as the endpoint names it (when it does). */
  model?: string | undefined;
  /** Tokens in and out, when the endpoint reports them (asked for while tracing). */
  usage?: { inputTokens: number; outputTokens: number } | undefined;
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
    options?: ErrorOptions,
  ) {
    super(`chat completion failed with HTTP ${status}: ${detail.slice(0, 300)}`, options);
  }
}

/** Retries of one model call that failed before its stream began (429, 5xx, a broken connection), with backoff. */
const MAX_RETRIES = 2;

export class OpenAiCompatibleClient implements LlmClient {
  readonly model: string;
  readonly #apiKey: string | undefined;
  /** The library client, made on the first call: importing `openai` costs an actor ~0.2 s and ~15 MiB. */
  #api: Promise<OpenAI> | undefined;

  constructor(
    private readonly config: LlmConfig,
    apiKey: string | undefined,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.model = config.model;
    this.#apiKey = apiKey;
  }

  #client(): Promise<OpenAI> {
    this.#api ??= import("openai").then(({ default: OpenAI }) => {
      const apiKey = this.#apiKey;
      // Everything is given explicitly: the library must not pick up OPENAI_* variables from the worker's environment.
      return new OpenAI({
        baseURL: this.config.baseUrl.replace(/\/+$/, ""),
        apiKey: apiKey ?? "none",
        organization: null,
        project: null,
        fetch: this.fetchImpl,
        maxRetries: MAX_RETRIES,
        // Without a key no Authorization header at all (a local server), never a made-up one.
        ...(apiKey ? {} : { defaultHeaders: { authorization: null } }),
      });
    });
    return this.#api;
  }

  /** One model call; while tracing, a GenAI client span `chat <model>` with the model, tokens and finish reason. */
  async chat(request: ChatRequest): Promise<ChatReply> {
    if (!tracing()) return await this.#chat(request, false);
    const { ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_PROVIDER_NAME, ATTR_GEN_AI_REQUEST_MODEL } = A;
    const options = {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_GEN_AI_OPERATION_NAME]: "chat",
        [ATTR_GEN_AI_PROVIDER_NAME]: "openai",
        [ATTR_GEN_AI_REQUEST_MODEL]: this.model,
      },
    };
    return await inSpan(`chat ${this.model}`, options, async (span) => {
      const reply = await this.#chat(request, true);
      span.setAttribute(A.ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [reply.finishReason]);
      if (reply.model !== undefined) span.setAttribute(A.ATTR_GEN_AI_RESPONSE_MODEL, reply.model);
      if (reply.usage !== undefined) {
        span.setAttribute(A.ATTR_GEN_AI_USAGE_INPUT_TOKENS, reply.usage.inputTokens);
        span.setAttribute(A.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, reply.usage.outputTokens);
      }
      return reply;
    });
  }

  async #chat(request: ChatRequest, withUsage: boolean): Promise<ChatReply> {
    const body: ChatCompletionCreateParamsStreaming = {
      model: this.model,
      messages: request.messages as ChatCompletionMessageParam[],
      stream: true,
    };
    if (this.config.temperature !== undefined) body.temperature = this.config.temperature;
    if (request.tools && request.tools.length > 0) body.tools = request.tools;
    // The token counts of a streamed answer come in a last chunk, only when asked for.
    if (withUsage) body.stream_options = { include_usage: true };
    let stream: AsyncIterable<ChatCompletionChunk>;
    try {
      stream = await (await this.#client()).chat.completions.create(body, { signal: request.signal });
    } catch (error) {
      const { APIError } = await import("openai"); // loaded by now: #client() imported it
      if (error instanceof APIError && error.status !== undefined)
        throw new LlmRequestError(error.status, error.message, { cause: error });
      throw error;
    }
    let content = "";
    let finishReason = "stop";
    const calls: ChatToolCall[] = [];
    let model: string | undefined;
    let usage: ChatReply["usage"];
    for await (const chunk of stream) {
      if (chunk.model) model = chunk.model;
      if (chunk.usage) usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
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
    return { content, toolCalls, finishReason, model, usage };
  }
}
