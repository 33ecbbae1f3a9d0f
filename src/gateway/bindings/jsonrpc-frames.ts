// The JSON-RPC binding's framing: error responses (code, HTTP status and headers from the protocol's error table),
// success responses, and the SSE frames of a stream, whose every `data:` line is a JSON-RPC response with the event in
// the dialect's form.
import {
  type DescribedError,
  describeError,
  type JsonRpcErrorDetail,
  type JsonRpcErrorResponse,
  type JsonRpcId,
} from "../../protocol/index.ts";
import type { SseFraming } from "../event-sink.ts";
import { dataFrame, errorEventFrame } from "../sse-frames.ts";
import { closesStream } from "../task-stream.ts";
import { type JsonRpcDialect, V1_DIALECT } from "./jsonrpc-dialect.ts";

/** What to send for an error: HTTP status, extra headers and the JSON-RPC error response. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: JsonRpcErrorResponse;
  /** The error was not one a client is meant to see: it must be logged, and the client got only "Internal error". */
  unexpected: boolean;
}

/** The JSON-RPC error response of a described error. */
function errorBody(described: DescribedError, id: JsonRpcId): JsonRpcErrorResponse {
  const body: JsonRpcErrorResponse = {
    jsonrpc: "2.0",
    id,
    error: { code: described.row.jsonRpcCode, message: described.message },
  };
  if (described.details.length > 0) body.error.data = described.details as JsonRpcErrorDetail[];
  return body;
}

/** Maps any thrown value to its JSON-RPC answer. `id` is the request's id, or null when it could not be read. */
export function errorAnswer(error: unknown, id: JsonRpcId): ErrorAnswer {
  const described = describeError(error);
  const body = errorBody(described, id);
  return { status: described.row.jsonRpcStatus, headers: described.headers, body, unexpected: described.unexpected };
}

/** The HTTP response for an error answer. */
export function errorResponse(answer: ErrorAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { "Content-Type": "application/json", ...answer.headers },
  });
}

/** A JSON-RPC success response. */
export function resultResponse(id: JsonRpcId, result: unknown): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id, result }), {
    headers: { "Content-Type": "application/json" },
  });
}

/**
 * SSE frames whose data lines are JSON-RPC responses repeating the request's id, each event written as `dialect`
 * writes it (a status update that closes the stream is its last); an error ends as `event: error`.
 */
export function jsonRpcFraming(id: JsonRpcId, dialect: JsonRpcDialect = V1_DIALECT): SseFraming {
  return {
    event: (event) => {
      const final = event.statusUpdate !== undefined && closesStream(event.statusUpdate.status.state);
      return dataFrame(JSON.stringify({ jsonrpc: "2.0", id, result: dialect.event(event, final) }));
    },
    error: (described) => errorEventFrame(JSON.stringify(errorBody(described, id))),
  };
}
