// The HTTP+JSON binding's framing: a result as the bare response message, an error as a google.rpc.Status body
// (`{"error":{code,status,message,details}}`, A2A §11.6) with the HTTP status and headers of the protocol's error
// table, and SSE frames whose `data:` lines are bare StreamResponses, a failure ending as `event: error`.
import type { DescribedError, ErrorDetail, GrpcStatus } from "../../protocol/index.ts";
import type { SseFraming } from "../event-sink.ts";
import { dataFrame, errorEventFrame } from "../sse-frames.ts";

export const A2A_MEDIA_TYPE = "application/a2a+json";
const JSON_MEDIA_TYPE = "application/json";

/** The google.rpc.Status of an HTTP+JSON error answer: `code` is the HTTP status, `status` the gRPC code's name. */
export interface RestErrorBody {
  error: { code: number; status: GrpcStatus; message: string; details?: ErrorDetail[] };
}

/**
 * The media type of the answers to `request`: application/a2a+json (A2A §11.1) when the client's Accept names it, a
 * wildcard, or nothing; application/json when it names that instead, or only other types (a stream's
 * text/event-stream): some SDK clients read an error body only when it is labelled application/json.
 */
export function answerMediaType(request: Request): string {
  const accept = request.headers.get("accept") ?? "";
  const ranges = accept
    .split(",")
    .map((range) => range.split(";")[0]?.trim().toLowerCase() ?? "")
    .filter((range) => range !== "");
  if (ranges.includes(A2A_MEDIA_TYPE)) return A2A_MEDIA_TYPE;
  if (ranges.includes(JSON_MEDIA_TYPE)) return JSON_MEDIA_TYPE;
  const open = ranges.length === 0 || ranges.some((range) => range === "*/*" || range === "application/*");
  return open ? A2A_MEDIA_TYPE : JSON_MEDIA_TYPE;
}

/**
 * Every HTTP+JSON answer is private to the client that asked: GET answers carry tasks, and a shared cache keyed on the
 * URL alone (one that does not know X-API-Key authenticates) must not hand them to another client.
 */
const NO_STORE = { "Cache-Control": "no-store" } as const;

export function restErrorBody(described: DescribedError): RestErrorBody {
  const { row, message, details } = described;
  const body: RestErrorBody = { error: { code: row.httpStatus, status: row.grpcStatus, message } };
  if (details.length > 0) body.error.details = details;
  return body;
}

export function restErrorResponse(described: DescribedError, mediaType: string): Response {
  return new Response(JSON.stringify(restErrorBody(described)), {
    status: described.row.httpStatus,
    headers: { "Content-Type": mediaType, ...NO_STORE, ...described.headers },
  });
}

/** A method's response message; DeleteTaskPushNotificationConfig's empty one (null from the operation) is `{}`. */
export function restResultResponse(result: unknown, mediaType: string): Response {
  return new Response(JSON.stringify(result ?? {}), { headers: { "Content-Type": mediaType, ...NO_STORE } });
}

/** Each event a bare StreamResponse; a failure after the stream opened is `event: error` with a Status body. */
export const REST_FRAMING: SseFraming = {
  event: (event) => dataFrame(JSON.stringify(event)),
  error: (described) => errorEventFrame(JSON.stringify(restErrorBody(described))),
};
