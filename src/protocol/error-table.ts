// The one transport-neutral error table: for every error a client may see, its JSON-RPC code and the HTTP status the
// JSON-RPC binding answers with, the HTTP+JSON binding's status, and the gRPC status; plus the google.rpc details and
// headers every binding sends with it. Bindings frame what describeError returns; none keeps a table of its own.
import {
  A2aError,
  BlockingDeadlineExceededError,
  ContentTypeNotSupportedError,
  EndpointNotFoundError,
  ExtendedAgentCardNotConfiguredError,
  HttpMethodNotAllowedError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseError,
  PayloadTooLargeError,
  PermissionDeniedError,
  ProfileNotFoundError,
  PushNotificationNotSupportedError,
  RateLimitedError,
  RefusalError,
  RequestMediaTypeError,
  StoreNotReplicatedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "./errors.ts";

/** The ErrorInfo domain of A2A's own error types. */
export const A2A_ERROR_DOMAIN = "a2a-protocol.org";
/** The ErrorInfo domain of this runtime's own reasons (refusals, limits, authentication, deadlines). */
export const RUNTIME_ERROR_DOMAIN = "a2a-runtime";

/**
 * The reasons that name A2A's error types (the type name in UPPER_SNAKE_CASE without "Error"): they carry A2A's domain.
 * Every other reason is this runtime's own.
 */
const A2A_REASONS: ReadonlySet<string> = new Set([
  "PARSE_ERROR",
  "INVALID_REQUEST",
  "METHOD_NOT_FOUND",
  "INVALID_PARAMS",
  "TASK_NOT_FOUND",
  "TASK_NOT_CANCELABLE",
  "PUSH_NOTIFICATION_NOT_SUPPORTED",
  "UNSUPPORTED_OPERATION",
  "CONTENT_TYPE_NOT_SUPPORTED",
  "INVALID_AGENT_RESPONSE",
  "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
  "EXTENSION_SUPPORT_REQUIRED",
  "VERSION_NOT_SUPPORTED",
]);

/** The ErrorInfo domain of a reason: A2A's for its error types, this runtime's for the rest. */
export function errorDomain(reason: string): string {
  return A2A_REASONS.has(reason) ? A2A_ERROR_DOMAIN : RUNTIME_ERROR_DOMAIN;
}
/** The realm named in `WWW-Authenticate` on every 401. */
export const AUTH_REALM = "a2a-runtime";

/** The google.rpc.Code names a binding may answer with. */
export type GrpcStatus =
  | "INVALID_ARGUMENT"
  | "NOT_FOUND"
  | "FAILED_PRECONDITION"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "RESOURCE_EXHAUSTED"
  | "UNAVAILABLE"
  | "DEADLINE_EXCEEDED"
  | "UNIMPLEMENTED"
  | "INTERNAL";

type ErrorClass = abstract new (...args: never[]) => Error;

export interface ErrorRow {
  readonly type: ErrorClass;
  /** The JSON-RPC error code. */
  readonly jsonRpcCode: number;
  /** The HTTP status of a JSON-RPC error answer (200 unless the decision record or HTTP itself says otherwise). */
  readonly jsonRpcStatus: number;
  /** The HTTP status of the HTTP+JSON binding (spec section 11). */
  readonly httpStatus: number;
  readonly grpcStatus: GrpcStatus;
}

// Checked in order: a subclass (MessageIdReusedError is an InvalidParamsError, RateLimitedError a RefusalError) is
// covered by its base's row unless a row of its own comes first.
const ROWS: readonly ErrorRow[] = [
  { type: ParseError, jsonRpcCode: -32700, jsonRpcStatus: 200, httpStatus: 400, grpcStatus: "INVALID_ARGUMENT" },
  {
    type: PayloadTooLargeError,
    jsonRpcCode: -32600,
    jsonRpcStatus: 413,
    httpStatus: 413,
    grpcStatus: "RESOURCE_EXHAUSTED",
  },
  {
    type: InvalidRequestError,
    jsonRpcCode: -32600,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
  },
  { type: ProfileNotFoundError, jsonRpcCode: -32600, jsonRpcStatus: 404, httpStatus: 404, grpcStatus: "NOT_FOUND" },
  {
    type: EndpointNotFoundError,
    jsonRpcCode: -32600,
    jsonRpcStatus: 404,
    httpStatus: 404,
    grpcStatus: "UNIMPLEMENTED",
  },
  { type: MethodNotFoundError, jsonRpcCode: -32601, jsonRpcStatus: 200, httpStatus: 404, grpcStatus: "UNIMPLEMENTED" },
  {
    type: HttpMethodNotAllowedError,
    jsonRpcCode: -32601,
    jsonRpcStatus: 405,
    httpStatus: 405,
    grpcStatus: "UNIMPLEMENTED",
  },
  {
    type: InvalidParamsError,
    jsonRpcCode: -32602,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
  },
  { type: TaskNotFoundError, jsonRpcCode: -32001, jsonRpcStatus: 200, httpStatus: 404, grpcStatus: "NOT_FOUND" },
  {
    type: TaskNotCancelableError,
    jsonRpcCode: -32002,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
  },
  {
    type: PushNotificationNotSupportedError,
    jsonRpcCode: -32003,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
  },
  {
    type: UnsupportedOperationError,
    jsonRpcCode: -32004,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
  },
  {
    type: RequestMediaTypeError,
    jsonRpcCode: -32005,
    jsonRpcStatus: 415,
    httpStatus: 415,
    grpcStatus: "INVALID_ARGUMENT",
  },
  {
    type: ContentTypeNotSupportedError,
    jsonRpcCode: -32005,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "INVALID_ARGUMENT",
  },
  {
    type: ExtendedAgentCardNotConfiguredError,
    jsonRpcCode: -32007,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
  },
  {
    type: VersionNotSupportedError,
    jsonRpcCode: -32009,
    jsonRpcStatus: 200,
    httpStatus: 400,
    grpcStatus: "FAILED_PRECONDITION",
  },
  {
    type: UnauthenticatedError,
    jsonRpcCode: -32000,
    jsonRpcStatus: 401,
    httpStatus: 401,
    grpcStatus: "UNAUTHENTICATED",
  },
  {
    type: PermissionDeniedError,
    jsonRpcCode: -32000,
    jsonRpcStatus: 403,
    httpStatus: 403,
    grpcStatus: "PERMISSION_DENIED",
  },
  {
    type: RateLimitedError,
    jsonRpcCode: -32000,
    jsonRpcStatus: 429,
    httpStatus: 429,
    grpcStatus: "RESOURCE_EXHAUSTED",
  },
  {
    type: StoreNotReplicatedError,
    jsonRpcCode: -32000,
    jsonRpcStatus: 503,
    httpStatus: 503,
    grpcStatus: "UNAVAILABLE",
  },
  { type: RefusalError, jsonRpcCode: -32000, jsonRpcStatus: 503, httpStatus: 503, grpcStatus: "UNAVAILABLE" },
  {
    type: BlockingDeadlineExceededError,
    jsonRpcCode: -32603,
    jsonRpcStatus: 504,
    httpStatus: 504,
    grpcStatus: "DEADLINE_EXCEEDED",
  },
];

/** The row of an error nobody meant a client to see: "Internal error", details only in the log. */
export const INTERNAL_ROW: ErrorRow = {
  type: Error,
  jsonRpcCode: -32603,
  jsonRpcStatus: 200,
  httpStatus: 500,
  grpcStatus: "INTERNAL",
};

/** A `google.protobuf.Any` detail: `google.rpc.ErrorInfo`, `BadRequest` or `RetryInfo`, tagged by `@type`. */
export type ErrorDetail = { "@type": string } & Record<string, unknown>;

/** What every binding sends for one error. */
export interface DescribedError {
  readonly row: ErrorRow;
  /** The A2A error's reason (UPPER_SNAKE), or INTERNAL. */
  readonly reason: string;
  /** What the client reads: the error's own message, or "Internal error". */
  readonly message: string;
  /** ErrorInfo first, then BadRequest or RetryInfo where they apply; empty for an unexpected error. */
  readonly details: ErrorDetail[];
  /** HTTP headers (Retry-After, WWW-Authenticate) and, for gRPC, the same as metadata. */
  readonly headers: Record<string, string>;
  /** The error was not one a client is meant to see: it must be logged, and the client got only "Internal error". */
  readonly unexpected: boolean;
}

function errorInfo(error: A2aError): ErrorDetail {
  const detail: ErrorDetail = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: error.reason,
    domain: errorDomain(error.reason),
  };
  if (Object.keys(error.metadata).length > 0) detail.metadata = { ...error.metadata };
  return detail;
}

function detailsOf(error: A2aError): ErrorDetail[] {
  const details = [errorInfo(error)];
  if (error instanceof InvalidParamsError && error.violations.length > 0) {
    details.push({
      "@type": "type.googleapis.com/google.rpc.BadRequest",
      fieldViolations: error.violations.map(({ field, description }) => ({ field, description })),
    });
  }
  if (error instanceof RefusalError) {
    details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${error.retryAfterSeconds}s` });
  }
  return details;
}

function headersOf(error: A2aError): Record<string, string> {
  if (error instanceof RefusalError) return { "Retry-After": String(error.retryAfterSeconds) };
  if (error instanceof UnauthenticatedError) return { "WWW-Authenticate": `Bearer realm="${AUTH_REALM}"` };
  if (error instanceof HttpMethodNotAllowedError) return { Allow: error.allowed.join(", ") };
  return {};
}

/** Describes any thrown value for a binding; an error it does not know is INTERNAL with a generic message. */
export function describeError(error: unknown): DescribedError {
  const row = error instanceof A2aError ? ROWS.find((candidate) => error instanceof candidate.type) : undefined;
  if (!row || !(error instanceof A2aError)) {
    return {
      row: INTERNAL_ROW,
      reason: "INTERNAL",
      message: "Internal error",
      details: [],
      headers: {},
      unexpected: true,
    };
  }
  return {
    row,
    reason: error.reason,
    message: error.message,
    details: detailsOf(error),
    headers: headersOf(error),
    unexpected: false,
  };
}
