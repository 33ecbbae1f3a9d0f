// What an A2A call can fail with, as seen by a client: a JSON-RPC error answer (with its ErrorInfo reason, RetryInfo
// and field violations decoded), a server that cannot be reached, or an answer that is not A2A JSON-RPC at all.

/** Base of every error the client library throws. */
export class A2aClientError extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One `google.rpc.BadRequest` field violation. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

/** The decoded `error` object of a JSON-RPC answer plus what the HTTP response said about it. */
export interface RpcErrorInit {
  readonly method: string;
  readonly code: number;
  readonly message: string;
  /** The HTTP status the error came with (200 for most JSON-RPC errors, 401/403/503/504 for some). */
  readonly httpStatus: number;
  /** The raw `error.data` details (ProtoJSON `Any` objects), [] when absent. */
  readonly data: readonly unknown[];
  /** The `Retry-After` header, if any. */
  readonly retryAfterHeader?: string | null;
}

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo";
const BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function detail(data: readonly unknown[], type: string): Record<string, unknown> | undefined {
  return data.find((item): item is Record<string, unknown> => isRecord(item) && item["@type"] === type);
}

/** Seconds of a google.protobuf.Duration string such as "5s" or "1.5s"; undefined when it is not one. */
export function durationSeconds(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Number(match[1]) : undefined;
}

/** Seconds of a Retry-After header: delta-seconds or an HTTP date (relative to `now`, never negative). */
export function retryAfterSeconds(header: string | null | undefined, now = Date.now()): number | undefined {
  if (header === null || header === undefined || header.trim() === "") return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** A JSON-RPC error answer. `reason` is the ErrorInfo reason (e.g. WORKER_UNAVAILABLE, TASK_NOT_FOUND). */
export class RpcError extends A2aClientError {
  readonly method: string;
  readonly code: number;
  readonly httpStatus: number;
  readonly reason: string | undefined;
  readonly domain: string | undefined;
  /** ErrorInfo metadata (string values only), {} when absent. */
  readonly metadata: Readonly<Record<string, string>>;
  /** From RetryInfo, else from the Retry-After header; undefined when the server gave no retry hint. */
  readonly retryAfterSeconds: number | undefined;
  readonly violations: readonly FieldViolation[];
  readonly data: readonly unknown[];

  constructor(init: RpcErrorInit) {
    super(init.message);
    this.method = init.method;
    this.code = init.code;
    this.httpStatus = init.httpStatus;
    this.data = init.data;
    const info = detail(init.data, ERROR_INFO);
    this.reason = typeof info?.reason === "string" ? info.reason : undefined;
    this.domain = typeof info?.domain === "string" ? info.domain : undefined;
    const metadata: Record<string, string> = {};
    if (isRecord(info?.metadata))
      for (const [key, value] of Object.entries(info.metadata)) if (typeof value === "string") metadata[key] = value;
    this.metadata = metadata;
    this.retryAfterSeconds =
      durationSeconds(detail(init.data, RETRY_INFO)?.retryDelay) ?? retryAfterSeconds(init.retryAfterHeader);
    const violations = detail(init.data, BAD_REQUEST)?.fieldViolations;
    this.violations = Array.isArray(violations)
      ? violations
          .filter(isRecord)
          .map((v) => ({ field: String(v.field ?? ""), description: String(v.description ?? "") }))
      : [];
  }
}

/** The endpoint could not be reached (refused, reset, DNS, TLS, aborted). */
export class ConnectionError extends A2aClientError {
  constructor(
    readonly endpoint: string,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

/** The server answered, but not with an A2A JSON-RPC answer (HTML error page, wrong content type, bad JSON, id mismatch). */
export class ResponseError extends A2aClientError {
  constructor(
    message: string,
    readonly httpStatus: number,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
  }
}
