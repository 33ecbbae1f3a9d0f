// The one place that knows JSON-RPC error codes, HTTP statuses, google.rpc details and Retry-After. Every error a
// client sees passes through errorAnswer; an error it does not know becomes a generic -32603 (details go to the log).

import type { JsonRpcErrorDetail, JsonRpcErrorResponse, JsonRpcId } from "../protocol/index.ts";
import {
  A2aError,
  BlockingDeadlineExceededError,
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  RefusalError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "../protocol/index.ts";

/** No A2A endpoint (and no profile) at the requested path: HTTP 404. */
export class EndpointNotFoundError extends A2aError {
  constructor(path: string) {
    super("NOT_FOUND", `No A2A endpoint at ${path}`, { metadata: { path } });
  }
}

export const ERROR_DOMAIN = "a2a-protocol.org";
/** The realm named in `WWW-Authenticate` on every 401. */
export const AUTH_REALM = "a2a-runtime";

type ErrorClass = abstract new (...args: never[]) => Error;

interface Row {
  readonly type: ErrorClass;
  readonly code: number;
  readonly status: number;
}

// Checked in order: subclasses (MessageIdReusedError is an InvalidParamsError) are covered by their base's row.
const ROWS: readonly Row[] = [
  { type: ParseError, code: -32700, status: 200 },
  { type: PayloadTooLargeError, code: -32600, status: 413 },
  { type: InvalidRequestError, code: -32600, status: 200 },
  { type: EndpointNotFoundError, code: -32600, status: 404 },
  { type: MethodNotFoundError, code: -32601, status: 200 },
  { type: InvalidParamsError, code: -32602, status: 200 },
  { type: TaskNotFoundError, code: -32001, status: 200 },
  { type: TaskNotCancelableError, code: -32002, status: 200 },
  { type: PushNotificationNotSupportedError, code: -32003, status: 200 },
  { type: UnsupportedOperationError, code: -32004, status: 200 },
  { type: ContentTypeNotSupportedError, code: -32005, status: 200 },
  { type: ExtendedAgentCardNotConfiguredError, code: -32007, status: 200 },
  { type: VersionNotSupportedError, code: -32009, status: 200 },
  { type: UnauthenticatedError, code: -32000, status: 401 },
  { type: PermissionDeniedError, code: -32000, status: 403 },
  { type: RefusalError, code: -32000, status: 503 },
  { type: BlockingDeadlineExceededError, code: -32603, status: 504 },
];

/** What to send for an error: HTTP status, extra headers and the JSON-RPC error response. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: JsonRpcErrorResponse;
  /** The error was not one a client is meant to see: it must be logged, and the client got only "Internal error". */
  unexpected: boolean;
}

function errorInfo(error: A2aError): JsonRpcErrorDetail {
  const detail: Record<string, unknown> = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: error.reason,
    domain: ERROR_DOMAIN,
  };
  if (Object.keys(error.metadata).length > 0) detail.metadata = { ...error.metadata };
  return detail as JsonRpcErrorDetail;
}

function details(error: A2aError): JsonRpcErrorDetail[] {
  const data = [errorInfo(error)];
  if (error instanceof InvalidParamsError && error.violations.length > 0) {
    data.push({
      "@type": "type.googleapis.com/google.rpc.BadRequest",
      fieldViolations: error.violations.map(({ field, description }) => ({ field, description })),
    } as JsonRpcErrorDetail);
  }
  if (error instanceof RefusalError) {
    data.push({
      "@type": "type.googleapis.com/google.rpc.RetryInfo",
      retryDelay: `${error.retryAfterSeconds}s`,
    } as JsonRpcErrorDetail);
  }
  return data;
}

function headersFor(error: A2aError): Record<string, string> {
  if (error instanceof RefusalError) return { "Retry-After": String(error.retryAfterSeconds) };
  if (error instanceof UnauthenticatedError) return { "WWW-Authenticate": `Bearer realm="${AUTH_REALM}"` };
  return {};
}

/** Maps any thrown value to its answer. `id` is the request's id, or null when it could not be read. */
export function errorAnswer(error: unknown, id: JsonRpcId): ErrorAnswer {
  const row = error instanceof A2aError ? ROWS.find((candidate) => error instanceof candidate.type) : undefined;
  if (!row || !(error instanceof A2aError)) {
    return {
      status: 200,
      headers: {},
      body: { jsonrpc: "2.0", id, error: { code: -32603, message: "Internal error" } },
      unexpected: true,
    };
  }
  return {
    status: row.status,
    headers: headersFor(error),
    body: { jsonrpc: "2.0", id, error: { code: row.code, message: error.message, data: details(error) } },
    unexpected: false,
  };
}

/** The HTTP response for an error answer. */
export function errorResponse(answer: ErrorAnswer): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { "Content-Type": "application/json", ...answer.headers },
  });
}
