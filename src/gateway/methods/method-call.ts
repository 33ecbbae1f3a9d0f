// What a method handler receives: the authenticated client, its profile, the checked params and the request's clock.
import type { ClientRecord } from "../../journal/index.ts";
import type { GatewayContext, ProfileRuntime } from "../gateway-context.ts";
import type { A2aMethod, A2aParams } from "../schema/index.ts";

export interface MethodCall<M extends A2aMethod> {
  readonly context: GatewayContext;
  readonly client: ClientRecord;
  readonly profile: ProfileRuntime;
  readonly params: A2aParams[M];
  /** Unique within the process; names this request's waiting lease. */
  readonly requestId: string;
  /** performance.now() when the request arrived: the blocking deadline counts from here. */
  readonly startedAt: number;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
}

/** Resolves with the JSON-RPC `result`; throws an A2aError for an error answer. */
export type MethodHandler<M extends A2aMethod> = (call: MethodCall<M>) => Promise<unknown>;
