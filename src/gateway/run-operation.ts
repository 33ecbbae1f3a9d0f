// Calls one checked operation for any binding: the blocking SendMessage's own deadline, the store deadline around the
// call, and a streaming operation's SSE response in the binding's framing. What the call answers is the binding's to
// frame; errors are thrown to it unchanged.
import type { ClientRecord } from "../journal/index.ts";
import type { A2aMethod, A2aParams } from "../protocol/index.ts";
import { SseEventSink, type SseFraming } from "./event-sink.ts";
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
  readonly request: Request;
  readonly profile: ProfileRuntime;
  readonly client: ClientRecord;
  readonly account: RequestAccount;
  readonly deadline: StoreDeadline;
  readonly method: M;
  readonly params: A2aParams[M];
}

/** A unary operation's result (the proto response message), or a streaming one's started SSE response. */
export type Answer = { readonly result: unknown } | { readonly stream: Response };

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
export async function runOperation<M extends A2aMethod>(
  checked: CheckedRequest<M>,
  framing: SseFraming,
): Promise<Answer> {
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
    const sink = new SseEventSink(context, framing, checked.request.signal, checked.client.id);
    opened.open(sink);
    traceStream(account.span, sink, opened.taskId);
    account.answered(0, undefined, { taskId: opened.taskId, contextId: opened.contextId });
    return { stream: sink.response };
  }
  const result = await deadline.bound(run(method as UnaryMethod, call as OperationCall<UnaryMethod>));
  account.answered(0, undefined, result);
  return { result };
}
