// What a method handler receives: the authenticated client, its profile, the checked params and the request's clock.

import type { ClientRecord } from "../../journal/index.ts";
import type { A2aMethod, A2aParams, JsonRpcId } from "../../protocol/index.ts";
import { StoreTimeoutError } from "../../protocol/index.ts";
import type { GatewayContext, ProfileRuntime } from "../gateway-context.ts";

export interface MethodCall<M extends A2aMethod> {
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
}

/**
 * Throws when the request's store deadline has passed: its 503 STORE_TIMEOUT is out, so work that was queued behind a
 * paused Redis must not go on to store anything.
 */
export function stopIfTimedOut(call: MethodCall<A2aMethod>): void {
  const { signal } = call;
  if (signal.aborted && signal.reason instanceof StoreTimeoutError) throw signal.reason;
}

/** Resolves with the JSON-RPC `result`; throws an A2aError for an error answer. */
export type MethodHandler<M extends A2aMethod> = (call: MethodCall<M>) => Promise<unknown>;

/** A streaming method's call: it also knows the JSON-RPC id that every event repeats. */
export interface StreamCall<M extends A2aMethod> extends MethodCall<M> {
  readonly rpcId: JsonRpcId;
}

/**
 * Resolves with the SSE response once the stream has started; throws an A2aError for a plain JSON error answer
 * (anything found before the first event: refusals, a missing or terminal task, streaming switched off).
 */
export type StreamMethodHandler<M extends A2aMethod> = (call: StreamCall<M>) => Promise<Response>;
