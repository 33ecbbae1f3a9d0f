// Sends A2A 1.0 JSON-RPC requests to one endpoint over fetch: one POST per call, `A2A-Version` and the API key on every
// request, answers decoded into a result or an RpcError; streaming calls read the SSE body event by event.
import { A2aClientError, ConnectionError, ResponseError, RpcError } from "./client-errors.ts";
import { parseSse } from "./sse-parser.ts";

export interface TransportOptions {
  /** The JSON-RPC endpoint: the `url` of an agent card's JSONRPC interface, e.g. http://localhost:8080/a2a/echo. */
  endpoint: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged or put into an error message. */
  apiKey?: string | undefined;
  /** Extra headers on every request. */
  headers?: Readonly<Record<string, string>>;
  /** The `A2A-Version` header; default "1.0". */
  protocolVersion?: string;
  /** Defaults to the global fetch. */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  /** Largest SSE event accepted, in characters (see parseSse). */
  maxEventChars?: number;
}

export interface CallOptions {
  /** Aborts the request (and closes a stream). */
  signal?: AbortSignal | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class JsonRpcTransport {
  private nextId = 1;
  private readonly headers: Record<string, string>;
  private readonly fetcher: (input: string, init: RequestInit) => Promise<Response>;

  constructor(private readonly options: TransportOptions) {
    const { apiKey } = options;
    // A key a header cannot carry would make fetch throw an error that may quote the header: refuse it first.
    if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey))
      throw new A2aClientError("the API key holds characters an HTTP header cannot carry (spaces, line breaks, …)");
    this.headers = {
      ...options.headers,
      "Content-Type": "application/json",
      "A2A-Version": options.protocolVersion ?? "1.0",
      ...(apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` }),
    };
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get endpoint(): string {
    return this.options.endpoint;
  }

  /** Calls one method and resolves with its `result`; throws RpcError, ConnectionError or ResponseError. */
  async call(method: string, params: unknown, options: CallOptions = {}): Promise<unknown> {
    const id = this.nextId++;
    const response = await this.post(method, id, params, "application/json", options.signal);
    return this.decode(method, id, response, await this.text(response, options.signal));
  }

  /**
   * Calls a streaming method and yields each event's `result` in order until the server closes the stream. An error
   * before the first event (an ordinary JSON answer) or inside the stream (an error event) is thrown as RpcError.
   */
  async *stream(method: string, params: unknown, options: CallOptions = {}): AsyncGenerator<unknown, void, undefined> {
    const id = this.nextId++;
    const response = await this.post(method, id, params, "text/event-stream", options.signal);
    const type = response.headers.get("content-type") ?? "";
    if (!type.toLowerCase().startsWith("text/event-stream") || response.body === null) {
      // An error answered before the stream opened, or a server that answered the call in one piece.
      yield this.decode(method, id, response, await this.text(response, options.signal));
      return;
    }
    const limit = this.options.maxEventChars === undefined ? {} : { maxEventChars: this.options.maxEventChars };
    try {
      for await (const event of parseSse(response.body, limit)) {
        let value: unknown;
        try {
          value = JSON.parse(event.data);
        } catch (error) {
          throw new ResponseError(`${method}: an SSE event is not JSON`, response.status, { cause: error });
        }
        yield this.unwrap(method, id, value, response);
      }
    } catch (error) {
      if (error instanceof A2aClientError || options.signal?.aborted) throw error;
      throw new ConnectionError(this.endpoint, `${method}: the stream broke: ${messageOf(error)}`, { cause: error });
    }
  }

  private async post(
    method: string,
    id: number,
    params: unknown,
    accept: string,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
    try {
      return await this.fetcher(this.endpoint, {
        method: "POST",
        headers: { ...this.headers, Accept: accept },
        body,
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ConnectionError(this.endpoint, `cannot reach ${this.endpoint}: ${messageOf(error)}`, { cause: error });
    }
  }

  private async text(response: Response, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ConnectionError(this.endpoint, `the answer from ${this.endpoint} broke off: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }

  private decode(method: string, id: number, response: Response, text: string): unknown {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ResponseError(
        `${method}: HTTP ${response.status} from ${this.endpoint} is not a JSON-RPC answer`,
        response.status,
      );
    }
    return this.unwrap(method, id, value, response);
  }

  /** The `result` of one JSON-RPC response object, or its error thrown as RpcError. */
  private unwrap(method: string, id: number, value: unknown, response: Response): unknown {
    if (!isRecord(value) || value.jsonrpc !== "2.0")
      throw new ResponseError(`${method}: HTTP ${response.status}: not a JSON-RPC 2.0 answer`, response.status);
    const error = value.error;
    if (isRecord(error) && typeof error.code === "number") {
      throw new RpcError({
        method,
        code: error.code,
        message: typeof error.message === "string" ? error.message : "",
        httpStatus: response.status,
        data: Array.isArray(error.data) ? error.data : [],
        retryAfterHeader: response.headers.get("retry-after"),
      });
    }
    if (!("result" in value))
      throw new ResponseError(`${method}: the answer has neither result nor error`, response.status);
    if (value.id !== id) throw new ResponseError(`${method}: the answer is for request ${String(value.id)}`, 200);
    return value.result;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
