// Exit codes of `send` and `task`, and the one-line message (plus a JSON form for --json) of every way a call fails.
// Messages carry the JSON-RPC code and ErrorInfo reason; they never hold the API key.
import { A2aClientError, ConnectionError, ResponseError, RpcError } from "../client/index.ts";
import { isInterrupted, isTerminal, type TaskState } from "../protocol/index.ts";
import { API_KEY_VARIABLE } from "./client-connection.ts";

/** Exit codes; docs/client.md lists them for scripts. */
export const EXIT_CODES = {
  /** Done: the task completed, or the command did what was asked. */
  ok: 0,
  /** A usage error or an unexpected failure. */
  usage: 1,
  /** The task ended FAILED, REJECTED or CANCELED. */
  taskUnsuccessful: 2,
  /** The task waits for input (INPUT_REQUIRED) or authorization (AUTH_REQUIRED). */
  taskInterrupted: 3,
  /** The task is still queued or running (blocking wait ended, stream closed, cancel pending). */
  taskUnfinished: 4,
  /** Refused for now (no worker, a capacity limit, store unavailable): retry after the time given. */
  refused: 5,
  /** The API key is missing, unknown or revoked (401), or may not use the profile (403). */
  unauthorized: 6,
  /** Any other A2A or JSON-RPC error (task not found, not cancelable, invalid params, unsupported, version…). */
  rpcError: 7,
  /** The gateway could not be reached, or answered with something that is not A2A JSON-RPC. */
  unreachable: 8,
} as const;

/** The exit code for a task in `state` at the end of a command. */
export function stateExitCode(state: TaskState): number {
  if (state === "TASK_STATE_COMPLETED") return EXIT_CODES.ok;
  if (isTerminal(state)) return EXIT_CODES.taskUnsuccessful;
  if (isInterrupted(state)) return EXIT_CODES.taskInterrupted;
  return EXIT_CODES.taskUnfinished;
}

export interface Failure {
  readonly line: string;
  readonly code: number;
  /** What `--json` prints on stdout: `{"error": …}`. */
  readonly json: { error: Record<string, unknown> };
}

function rpcFailure(error: RpcError, hasKey: boolean): { line: string; code: number } {
  const reason = error.reason ?? String(error.code);
  const message = error.message === "" ? "" : `: ${error.message}`;
  if (error.reason === "BLOCKING_DEADLINE_EXCEEDED") {
    const taskId = error.metadata.taskId ?? "?";
    return {
      line: `still running: task ${taskId} did not settle within the gateway's blocking wait; see it with: a2a-runtime task get ${taskId}`,
      code: EXIT_CODES.taskUnfinished,
    };
  }
  if (error.httpStatus === 401 || error.reason === "UNAUTHENTICATED") {
    const hint = hasKey ? "" : ` (no API key was sent: pass --key or set ${API_KEY_VARIABLE})`;
    return { line: `not authenticated: ${reason}${message}${hint}`, code: EXIT_CODES.unauthorized };
  }
  if (error.httpStatus === 403 || error.reason === "PERMISSION_DENIED")
    return { line: `permission denied: ${reason}${message}`, code: EXIT_CODES.unauthorized };
  if (error.httpStatus === 503 || (error.code === -32000 && error.retryAfterSeconds !== undefined)) {
    const retry = error.retryAfterSeconds === undefined ? "" : `, retry after ${error.retryAfterSeconds} s`;
    return { line: `refused: ${reason}${retry}${message}`, code: EXIT_CODES.refused };
  }
  const field = error.violations[0];
  const detail = field && !error.message.includes(field.field) ? ` (${field.field}: ${field.description})` : "";
  return { line: `error ${error.code} ${reason}${message}${detail}`, code: EXIT_CODES.rpcError };
}

/** Describes any error a client command may meet. */
export function describeFailure(error: unknown, hasKey: boolean): Failure {
  if (error instanceof RpcError) {
    const { line, code } = rpcFailure(error, hasKey);
    const json: Record<string, unknown> = { code: error.code, message: error.message, httpStatus: error.httpStatus };
    if (error.reason !== undefined) json.reason = error.reason;
    if (error.retryAfterSeconds !== undefined) json.retryAfterSeconds = error.retryAfterSeconds;
    if (Object.keys(error.metadata).length > 0) json.metadata = error.metadata;
    if (error.violations.length > 0) json.fieldViolations = error.violations;
    return { line, code, json: { error: json } };
  }
  if (error instanceof ConnectionError)
    return { line: error.message, code: EXIT_CODES.unreachable, json: { error: { message: error.message } } };
  if (error instanceof ResponseError) {
    const line = `unexpected answer: ${error.message}`;
    return { line, code: EXIT_CODES.unreachable, json: { error: { message: line, httpStatus: error.httpStatus } } };
  }
  const message = error instanceof A2aClientError || error instanceof Error ? error.message : String(error);
  return { line: `error: ${message}`, code: EXIT_CODES.usage, json: { error: { message } } };
}
