// The transport over a fake fetch: headers on every request, results and error answers decoded (ErrorInfo reason,
// RetryInfo or Retry-After, field violations), answers that are not JSON-RPC, unreachable servers, and SSE streams.
import { describe, expect, test } from "bun:test";
import {
  A2aClient,
  A2aClientError,
  ConnectionError,
  JsonRpcTransport,
  ResponseError,
  RpcError,
} from "../../../src/client/index.ts";

interface Seen {
  url: string;
  headers: Headers;
  body: { jsonrpc: string; id: number; method: string; params: unknown };
}

function fakeFetch(answer: (seen: Seen) => Response, seen: Seen[] = []) {
  return async (url: string, init: RequestInit): Promise<Response> => {
    const call = { url, headers: new Headers(init.headers), body: JSON.parse(String(init.body)) };
    seen.push(call);
    return answer(call);
  };
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

function sse(frames: string[]): Response {
  return new Response(frames.join(""), { headers: { "Content-Type": "text/event-stream" } });
}

const ENDPOINT = "http://127.0.0.1:1/a2a/echo";

describe("JsonRpcTransport.call", () => {
  test("sends one JSON-RPC 2.0 request with A2A-Version and the key as a Bearer token; returns the result", async () => {
    const seen: Seen[] = [];
    const transport = new JsonRpcTransport({
      endpoint: ENDPOINT,
      apiKey: "k-123",
      fetch: fakeFetch(({ body }) => json({ jsonrpc: "2.0", id: body.id, result: { ok: true } }), seen),
    });
    expect(await transport.call("GetTask", { id: "t1" })).toEqual({ ok: true });
    expect(await transport.call("GetTask", { id: "t2" })).toEqual({ ok: true });
    const [first, second] = seen;
    expect(first?.url).toBe(ENDPOINT);
    expect(first?.headers.get("a2a-version")).toBe("1.0");
    expect(first?.headers.get("authorization")).toBe("Bearer k-123");
    expect(first?.headers.get("content-type")).toBe("application/json");
    expect(first?.body).toEqual({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t1" } });
    expect(second?.body.id).toBe(2);
  });

  test("a refusal carries its reason, the RetryInfo delay and the HTTP status", async () => {
    const transport = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) =>
        json(
          {
            jsonrpc: "2.0",
            id: body.id,
            error: {
              code: -32000,
              message: "No worker is live",
              data: [
                {
                  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                  reason: "WORKER_UNAVAILABLE",
                  domain: "a2a-runtime",
                },
                { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" },
              ],
            },
          },
          503,
          { "Retry-After": "5" },
        ),
      ),
    });
    const error = await transport.call("SendMessage", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    const rpc = error as RpcError;
    expect([rpc.code, rpc.reason, rpc.domain, rpc.httpStatus, rpc.retryAfterSeconds]).toEqual([
      -32000,
      "WORKER_UNAVAILABLE",
      "a2a-runtime",
      503,
      7,
    ]);
    expect(rpc.message).toBe("No worker is live");
    expect(rpc.method).toBe("SendMessage");
  });

  test("Retry-After is the fallback; metadata and field violations are decoded", async () => {
    const transport = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) =>
        json(
          {
            jsonrpc: "2.0",
            id: body.id,
            error: {
              code: -32602,
              message: "Invalid params",
              data: [
                {
                  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                  reason: "INVALID_PARAMS",
                  metadata: { a: "1", n: 2 },
                },
                {
                  "@type": "type.googleapis.com/google.rpc.BadRequest",
                  fieldViolations: [{ field: "id", description: "required" }],
                },
              ],
            },
          },
          200,
          { "Retry-After": "3" },
        ),
      ),
    });
    const rpc = (await transport.call("GetTask", {}).catch((e: unknown) => e)) as RpcError;
    expect(rpc.retryAfterSeconds).toBe(3);
    expect(rpc.metadata).toEqual({ a: "1" });
    expect(rpc.violations).toEqual([{ field: "id", description: "required" }]);
  });

  test("an answer that is not JSON-RPC, or for another id, is a ResponseError", async () => {
    const html = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: fakeFetch(() => new Response("<html>Bad gateway</html>", { status: 502 })),
    });
    const error = (await html.call("GetTask", {}).catch((e: unknown) => e)) as ResponseError;
    expect(error).toBeInstanceOf(ResponseError);
    expect(error.httpStatus).toBe(502);
    const other = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: fakeFetch(() => json({ jsonrpc: "2.0", id: 99, result: {} })),
    });
    expect(await other.call("GetTask", {}).catch((e: unknown) => e)).toBeInstanceOf(ResponseError);
    const noVersion = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) => json({ id: body.id, result: {} })),
    });
    expect(await noVersion.call("GetTask", {}).catch((e: unknown) => e)).toBeInstanceOf(ResponseError);
  });

  test("a server that cannot be reached is a ConnectionError naming the endpoint", async () => {
    const transport = new JsonRpcTransport({
      endpoint: ENDPOINT,
      fetch: async () => {
        throw new TypeError("Unable to connect");
      },
    });
    const error = (await transport.call("GetTask", {}).catch((e: unknown) => e)) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toBe(`cannot reach ${ENDPOINT}: Unable to connect`);
  });

  test("a key a header cannot carry is refused before sending, without quoting it", () => {
    const build = () => new JsonRpcTransport({ endpoint: ENDPOINT, apiKey: "secret-key\nX-Evil: 1" });
    expect(build).toThrow(A2aClientError);
    expect(build).not.toThrow(/secret-key/);
  });
});

describe("streams", () => {
  test("each SSE event's result is yielded in order; comments are ignored", async () => {
    const seen: Seen[] = [];
    const client = new A2aClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch(
        ({ body }) =>
          sse([
            ": stream open\n\n",
            `data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { task: { id: "t", contextId: "c", status: { state: "TASK_STATE_SUBMITTED" } } } })}\n\n`,
            `data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } } } })}\n\n`,
          ]),
        seen,
      ),
    });
    const events = [];
    for await (const event of client.sendStreamingMessage({
      message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] },
    }))
      events.push(event);
    expect(events.map((event) => Object.keys(event)[0])).toEqual(["task", "statusUpdate"]);
    expect(seen[0]?.headers.get("accept")).toBe("text/event-stream");
    expect(seen[0]?.body.method).toBe("SendStreamingMessage");
  });

  test("an error before the stream opens and an error event inside it are RpcErrors", async () => {
    const refused = new A2aClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) =>
        json({ jsonrpc: "2.0", id: body.id, error: { code: -32004, message: "Streaming is not offered" } }),
      ),
    });
    const before = await (async () => {
      for await (const _ of refused.subscribeToTask({ id: "t" })) return "event";
      return "none";
    })().catch((e: unknown) => e);
    expect((before as RpcError).code).toBe(-32004);

    const broken = new A2aClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) =>
        sse([
          `data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { task: { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } } })}\n\n`,
          `event: error\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, error: { code: -32603, message: "Internal error" } })}\n\n`,
        ]),
      ),
    });
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of broken.subscribeToTask({ id: "t" })) seen.push(Object.keys(event)[0] ?? "");
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["task"]);
    expect((error as RpcError).code).toBe(-32603);
  });

  test("an event that is not a StreamResponse is a ResponseError", async () => {
    const client = new A2aClient({
      endpoint: ENDPOINT,
      fetch: fakeFetch(({ body }) =>
        sse([`data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: { kind: "status-update" } })}\n\n`]),
      ),
    });
    const error = await (async () => {
      for await (const _ of client.subscribeToTask({ id: "t" })) {
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResponseError);
  });
});
