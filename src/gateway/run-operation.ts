// Calls one checked operation for any binding: the blocking SendMessage's own deadline, the store deadline around the
// call, and a streaming operation opened on the sink its binding makes (SSE, or a gRPC server stream). What the call
// answers is the binding's to frame; errors are thrown to it unchanged.
import type { ClientRecord } from "../journal/index.ts";
import type { A2aMethod, A2aParams } from "../protocol/index.ts";
import type { EventSink } from "./event-sink.ts";
import type { GatewayContext, ProfileRuntime } from "./gateway-context.ts";
import {
  isStreamMethod,
  OPERATIONS,
  type Operation,
  type OperationCall,
  STREAM_OPERATIONS,
  type StreamMethod,
  type StreamOperation,
  type UnaryMethod,
} from "./operations/index.ts";
import { traceStream } from "./request-span.ts";
import type { RequestAccount } from "./request-steps.ts";
import type { StoreDeadline } from "./store-deadline.ts";
import type { TaskStreamSource } from "./task-stream.ts";

/** How much later than its own deadline a blocking SendMessage is cut by the store deadline (its 504 comes first). */
const BLOCKING_GRACE_MS = 500;

/** True for a SendMessage that waits for the task (the default; returnImmediately: true answers at once). */
export function waitsForTask(method: A2aMethod, params: unknown): boolean {
  if (method !== "SendMessage") return false;
  const configuration = (params as { configuration?: { returnImmediately?: boolean } }).configuration;
  return configuration?.returnImmediately !== true;
}

/** An admitted request whose method and params have passed their checks. */
export interface CheckedRequest<M extends A2aMethod> {
  readonly context: GatewayContext;
  readonly profile: ProfileRuntime;
  readonly client: ClientRecord;
  readonly account: RequestAccount;
  readonly deadline: StoreDeadline;
  readonly method: M;
  readonly params: A2aParams[M];
}

/** A unary operation's result (the proto response message), or the sink a streaming one was opened on. */
export type Answer<S extends EventSink> = { readonly result: unknown } | { readonly sink: S };

function run<M extends UnaryMethod>(method: M, call: OperationCall<M>): Promise<unknown> {
  const operation: Operation<M> = OPERATIONS[method];
  return operation(call);
}

function source<M extends StreamMethod>(method: M, call: OperationCall<M>): Promise<TaskStreamSource> {
  const operation: StreamOperation<M> = STREAM_OPERATIONS[method];
  return operation(call);
}

/**
 * Runs the operation and records a success in the request's account. A streaming operation's failure before its first
 * event is thrown like any other, so that the binding answers it as a plain error and not as a stream.
 */
export async function runOperation<M extends A2aMethod, S extends EventSink>(
  checked: CheckedRequest<M>,
  sinkOf: (clientId: string) => S,
): Promise<Answer<S>> {
  const { context, account, deadline, method, params } = checked;
  const { server } = context.config;
  // A blocking SendMessage may wait up to its own deadline (then 504); the store deadline cuts it only past that.
  if (waitsForTask(method, params)) {
    const seconds = server.blockingWaitSeconds;
    deadline.arm(seconds * 1000 + BLOCKING_GRACE_MS, seconds, account.startedAt);
  }
  const call = {
    context,
    client: checked.client,
    profile: checked.profile,
    params,
    requestId: context.nextRequestId(),
    startedAt: account.startedAt,
    signal: deadline.signal,
    span: account.span,
  };
  if (isStreamMethod(method)) {
    const pending = source(method, call as OperationCall<typeof method>);
    const opened = await deadline.bound(pending).catch((error: unknown) => {
      // Past the store deadline the answer is out: a source that still arrives gives its leases back.
      void pending.then(
        (late) => late.abandon(),
        () => {},
      );
      throw error;
    });
    deadline.clear();
    const sink = sinkOf(checked.client.id);
    opened.open(sink);
    traceStream(account.span, sink, opened.taskId);
    account.answered(0, undefined, { taskId: opened.taskId, contextId: opened.contextId });
    return { sink };
  }
  const result = await deadline.bound(run(method as UnaryMethod, call as OperationCall<UnaryMethod>));
  account.answered(0, undefined, result);
  return { result };
}
