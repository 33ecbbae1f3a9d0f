// What an operation receives, whatever binding the request came by: the authenticated client, its profile, the
// checked params and the request's clock. Operations know nothing of JSON-RPC ids, HTTP statuses or SSE frames.
import type { Span } from "@opentelemetry/api";
import type { ClientRecord } from "../../journal/index.ts";
import { type A2aMethod, type A2aParams, StoreTimeoutError } from "../../protocol/index.ts";
import type { GatewayContext, ProfileRuntime } from "../gateway-context.ts";
import type { TaskStreamSource } from "../task-stream.ts";

export interface OperationCall<M extends A2aMethod> {
  readonly context: GatewayContext;
  readonly client: ClientRecord;
  readonly profile: ProfileRuntime;
  readonly params: A2aParams[M];
  /** Unique within the process; names this request's waiting lease. */
  readonly requestId: string;
  /** performance.now() when the request arrived: the blocking deadline counts from here. */
  readonly startedAt: number;
  /** Aborts when the client goes away, or when the store deadline passed (reason: a StoreTimeoutError). */
  readonly signal: AbortSignal;
  /** The call's SERVER span; undefined when tracing is off. */
  readonly span?: Span | undefined;
}

/**
 * Throws when the request's store deadline has passed: its 503 STORE_TIMEOUT is out, so work that was queued behind a
 * paused Redis must not go on to store anything.
 */
export function stopIfTimedOut(call: OperationCall<A2aMethod>): void {
  const { signal } = call;
  if (signal.aborted && signal.reason instanceof StoreTimeoutError) throw signal.reason;
}

/** Resolves with the operation's result (the proto response message); throws an A2aError for an error answer. */
export type Operation<M extends A2aMethod> = (call: OperationCall<M>) => Promise<unknown>;

/**
 * A streaming operation: resolves with the source of the stream's events once everything that can fail before the
 * first event has passed (refusals, a missing or terminal task, streaming switched off), which it throws instead.
 */
export type StreamOperation<M extends A2aMethod> = (call: OperationCall<M>) => Promise<TaskStreamSource>;
