// The transport-agnostic error classes: one per A2A error and one per refusal reason. Only error-table.ts knows codes
// and statuses (JSON-RPC, HTTP, gRPC); here an error has a name, a reason and a message.

/** Base of every error a2a-runtime shows a client. `reason` is the google.rpc.ErrorInfo reason (UPPER_SNAKE). */
export class A2aError extends Error {
  readonly reason: string;
  /** string → string, as google.rpc.ErrorInfo.metadata requires. */
  readonly metadata: Readonly<Record<string, string>>;
  constructor(reason: string, message: string, options: { cause?: unknown; metadata?: Record<string, string> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.metadata = options.metadata ?? {};
  }
  override get name(): string {
    return this.constructor.name;
  }
}

export class TaskNotFoundError extends A2aError {
  constructor(taskId: string) {
    super("TASK_NOT_FOUND", "Task not found", { metadata: { taskId } });
  }
}
export class TaskNotCancelableError extends A2aError {
  constructor(taskId: string, state: string) {
    super("TASK_NOT_CANCELABLE", `Task is ${state} and cannot be canceled`, { metadata: { taskId } });
  }
}
export class PushNotificationNotSupportedError extends A2aError {
  constructor() {
    super("PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported by this agent");
  }
}
export class UnsupportedOperationError extends A2aError {
  constructor(message: string, metadata: Record<string, string> = {}) {
    super("UNSUPPORTED_OPERATION", message, { metadata });
  }
}
export class ContentTypeNotSupportedError extends A2aError {
  constructor(mediaType: string) {
    super("CONTENT_TYPE_NOT_SUPPORTED", `Content type ${mediaType} is not supported`, { metadata: { mediaType } });
  }
}
export class ExtendedAgentCardNotConfiguredError extends A2aError {
  constructor() {
    super("EXTENDED_AGENT_CARD_NOT_CONFIGURED", "This agent has no extended agent card");
  }
}
export class VersionNotSupportedError extends A2aError {
  constructor(requested: string, served: readonly string[]) {
    const asked = requested === "" ? "no A2A-Version header (read as 0.3)" : `A2A-Version ${requested}`;
    super("VERSION_NOT_SUPPORTED", `${asked} is not served; this interface serves ${served.join(", ")}`, {
      metadata: { requested, served: served.join(",") },
    });
  }
}

/** A 1.0 method name in a request read as 0.3 (no A2A-Version header, or 0.3): the message says what to send. */
export class VersionHeaderRequiredError extends VersionNotSupportedError {
  constructor(method: string, served: readonly string[]) {
    super("0.3", served);
    this.message =
      `${method} is an A2A 1.0 method: send the header "A2A-Version: 1.0". A request without that header is read ` +
      "as A2A 0.3, whose methods are named like message/send";
  }
}

/** One invalid field: `field` is a dotted path such as `message.parts[0].text`. */
export interface FieldViolation {
  field: string;
  description: string;
}

export class InvalidParamsError extends A2aError {
  readonly violations: readonly FieldViolation[];
  constructor(message: string, violations: readonly FieldViolation[] = [], reason = "INVALID_PARAMS") {
    super(reason, message);
    this.violations = violations;
  }
}
export class MessageIdReusedError extends InvalidParamsError {
  constructor(messageId: string) {
    super(
      `messageId ${messageId} was already used for a different message`,
      [{ field: "message.messageId", description: "already used with other content" }],
      "MESSAGE_ID_REUSED",
    );
  }
}
export class InvalidRequestError extends A2aError {
  constructor(message: string) {
    super("INVALID_REQUEST", message);
  }
}
export class ParseError extends A2aError {
  constructor() {
    super("PARSE_ERROR", "Invalid JSON payload");
  }
}
export class MethodNotFoundError extends A2aError {
  /** `hint`, when given, follows the message (e.g. the method's name in the other protocol version). */
  constructor(method: string, hint?: string) {
    super("METHOD_NOT_FOUND", `Method ${method} does not exist${hint === undefined ? "" : `; ${hint}`}`, {
      metadata: { method },
    });
  }
}
/** An HTTP+JSON request whose body is not JSON by its Content-Type (HTTP 415); A2A's CONTENT_TYPE_NOT_SUPPORTED. */
export class RequestMediaTypeError extends ContentTypeNotSupportedError {
  constructor(mediaType: string) {
    super(mediaType);
    this.message = `A request body of type ${mediaType} is not accepted; send application/a2a+json or application/json`;
  }
}

/** An HTTP+JSON path served with other HTTP methods than the request's (HTTP 405, with an Allow header). */
export class HttpMethodNotAllowedError extends A2aError {
  readonly allowed: readonly string[];
  constructor(method: string, path: string, allowed: readonly string[]) {
    super("METHOD_NOT_ALLOWED", `${method} is not served at ${path}; use ${allowed.join(" or ")}`, {
      metadata: { method, allow: allowed.join(", ") },
    });
    this.allowed = allowed;
  }
}

export class PayloadTooLargeError extends A2aError {
  constructor(limitBytes: number) {
    super("PAYLOAD_TOO_LARGE", `Request body exceeds ${limitBytes} bytes`, {
      metadata: { limitBytes: `${limitBytes}` },
    });
  }
}

/** No A2A endpoint (and no profile) at the requested path: HTTP 404. */
export class EndpointNotFoundError extends A2aError {
  constructor(path: string) {
    super("NOT_FOUND", `No A2A endpoint at ${path}`, { metadata: { path } });
  }
}

/** A gRPC request whose tenant (or a2a-profile metadata) names no profile: gRPC NOT_FOUND. */
export class ProfileNotFoundError extends A2aError {
  constructor(profile: string) {
    super(
      "NOT_FOUND",
      `No profile named ${profile}: the request's tenant (or its a2a-profile metadata) names the profile`,
      { metadata: { profile } },
    );
  }
}

export class UnauthenticatedError extends A2aError {
  constructor(message = "Missing or invalid credentials") {
    super("UNAUTHENTICATED", message);
  }
}
export class PermissionDeniedError extends A2aError {
  constructor(profile: string) {
    super("PERMISSION_DENIED", `This client may not use profile ${profile}`, { metadata: { profile } });
  }
}

/** The blocking deadline passed: the task goes on and is retrievable by GetTask and ListTasks. */
export class BlockingDeadlineExceededError extends A2aError {
  constructor(taskId: string, seconds: number) {
    super(
      "BLOCKING_DEADLINE_EXCEEDED",
      `The task did not finish within ${seconds} s; it goes on, fetch it with GetTask`,
      {
        metadata: { taskId, blockingWaitSeconds: `${seconds}` },
      },
    );
  }
}

/** An HTTP 503: try again after `retryAfterSeconds`. Every refusal stores nothing (a StoreTimeoutError excepted). */
export class RefusalError extends A2aError {
  readonly retryAfterSeconds: number;
  constructor(reason: string, message: string, retryAfterSeconds: number, metadata: Record<string, string> = {}) {
    super(reason, message, { metadata });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Refusal reasons, each naming what was exhausted. */
export const REFUSAL_REASONS = {
  workerUnavailable: "WORKER_UNAVAILABLE",
  clientTaskLimit: "CLIENT_TASK_LIMIT_EXCEEDED",
  profileQuota: "PROFILE_QUOTA_EXCEEDED",
  clientStorage: "CLIENT_STORAGE_LIMIT_EXCEEDED",
  profileStorage: "PROFILE_STORAGE_LIMIT_EXCEEDED",
  interruptedTasks: "INTERRUPTED_TASKS_LIMIT_EXCEEDED",
  waitingRequests: "WAITING_REQUESTS_LIMIT_EXCEEDED",
  clientWaitingRequests: "CLIENT_WAITING_REQUESTS_LIMIT_EXCEEDED",
  rateLimit: "RATE_LIMIT_EXCEEDED",
  authenticationBusy: "AUTHENTICATION_BUSY",
  streamsPerTask: "STREAMS_PER_TASK_LIMIT_EXCEEDED",
  streamsPerClient: "STREAMS_PER_CLIENT_LIMIT_EXCEEDED",
  streamsPerInstallation: "STREAMS_PER_INSTALLATION_LIMIT_EXCEEDED",
  redisUnavailable: "STORE_UNAVAILABLE",
  storeTimeout: "STORE_TIMEOUT",
  storeNotReplicated: "STORE_NOT_REPLICATED",
} as const;

export class WorkerUnavailableError extends RefusalError {
  constructor(retryAfterSeconds: number) {
    super(
      REFUSAL_REASONS.workerUnavailable,
      "No worker is live to run this task; nothing was stored",
      retryAfterSeconds,
    );
  }
}
export class CapacityError extends RefusalError {}

/** The client made more requests than its rate allows (HTTP 429): try again after `retryAfterSeconds`. */
export class RateLimitedError extends RefusalError {
  constructor(requestsPerSecond: number, retryAfterSeconds: number) {
    super(
      REFUSAL_REASONS.rateLimit,
      `This client sends more than ${requestsPerSecond} requests per second; retry after ${retryAfterSeconds} s`,
      retryAfterSeconds,
      { requestsPerSecond: String(requestsPerSecond) },
    );
  }
}

/** Redis refused a write for a reason of its own: the write did not happen. */
const REFUSED_BY_REDIS = /^(OOM|READONLY|LOADING|MASTERDOWN|CLUSTERDOWN)/;

/**
 * Redis refused the write (for example at maxmemory: nothing was stored) or could not be reached. A connection lost
 * while a write was on its way leaves its outcome unknown; a retry with the same messageId is never accepted twice.
 */
export class StoreUnavailableError extends RefusalError {
  constructor(cause: unknown) {
    const refused = cause instanceof Error && REFUSED_BY_REDIS.test(cause.message);
    super(
      REFUSAL_REASONS.redisUnavailable,
      refused
        ? "The task store is unavailable; nothing was stored"
        : "The task store is unreachable; retry with the same messageId (a message is never accepted twice)",
      5,
    );
    this.cause = cause;
  }
}

/**
 * Redis did not answer within server.storeTimeoutSeconds (paused, or stalled without closing the connection). Unlike a
 * refusal, the request may still take effect once Redis answers: a retry with the same messageId finds the task.
 */
export class StoreTimeoutError extends RefusalError {
  constructor(seconds: number) {
    super(
      REFUSAL_REASONS.storeTimeout,
      `The task store did not answer within ${seconds} s; the request may still take effect: retry with the same ` +
        "messageId, or read the task with GetTask",
      seconds,
      { timeoutSeconds: `${seconds}` },
    );
  }
}

export interface NotReplicated {
  /** Replicas redis.ackReplicas asks for. */
  required: number;
  /** Replicas that confirmed within the timeout. */
  confirmed: number;
  timeoutMs: number;
  retryAfterSeconds: number;
  /** The task the write was about, when there is one. */
  taskId?: string;
}

/**
 * The primary applied the write but fewer replicas than redis.ackReplicas confirmed it in time: a failover now could
 * lose it. The write stands on the primary; a retry with the same messageId returns the same task, once replicated.
 */
export class StoreNotReplicatedError extends RefusalError {
  constructor(detail: NotReplicated) {
    const { required, confirmed, timeoutMs, taskId } = detail;
    super(
      REFUSAL_REASONS.storeNotReplicated,
      `The write reached the primary but ${confirmed} of the ${required} replicas required confirmed it within ` +
        `${timeoutMs} ms; retry with the same messageId (it returns the same task) or read the task with GetTask`,
      detail.retryAfterSeconds,
      {
        required: String(required),
        confirmed: String(confirmed),
        ...(taskId === undefined ? {} : { taskId }),
      },
    );
  }
}

/** An internal failure; its details go to the log, never to the client. */
export class InternalError extends A2aError {
  constructor(cause?: unknown) {
    super("INTERNAL", "Internal error", { cause });
  }
}
