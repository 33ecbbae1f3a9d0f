// The JSON-RPC binding: one POST to a profile's endpoint, in a fixed order: profile → credentials (headers only) →
// permission → A2A-Version → body (size cap) → JSON → envelope → method → params → operation. Nothing touches Redis
// before the credentials are checked, no body is read for a request without a valid key, and nothing is written
// before the params are valid. Every failure goes through the protocol's error table; a streaming operation's failure
// before its first event too, so that it is a plain JSON answer and not a stream.
import {
  type A2aMethod,
  checkJsonRpcRequest,
  checkParams,
  InvalidParamsError,
  InvalidRequestError,
  isA2aMethod,
  type JsonRpcId,
  MethodNotFoundError,
  type Violation,
} from "../../protocol/index.ts";
import { SseEventSink } from "../event-sink.ts";
import type { GatewayContext } from "../gateway-context.ts";
import {
  isStreamMethod,
  OPERATIONS,
  type Operation,
  type OperationCall,
  STREAM_OPERATIONS,
  type StreamMethod,
  type StreamOperation,
  type UnaryMethod,
} from "../operations/index.ts";
import { parseJsonBody, readCappedBody } from "../request-body.ts";
import { admit, checkVersion, profileOf, RequestAccount } from "../request-steps.ts";
import { StoreDeadline } from "../store-deadline.ts";
import type { TaskStreamSource } from "../task-stream.ts";
import { errorAnswer, errorResponse, jsonRpcFraming, resultResponse } from "./jsonrpc-frames.ts";

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/** ": <first violation>", for an error message. */
export function summary(violations: readonly Violation[]): string {
  const first = violations[0];
  if (!first) return "";
  return `: ${first.field === "" ? "" : `${first.field}: `}${first.description}`;
}

function run<M extends UnaryMethod>(method: M, call: OperationCall<M>): Promise<unknown> {
  const operation: Operation<M> = OPERATIONS[method];
  return operation(call);
}

function source<M extends StreamMethod>(method: M, call: OperationCall<M>): Promise<TaskStreamSource> {
  const operation: StreamOperation<M> = STREAM_OPERATIONS[method];
  return operation(call);
}

/** How much later than its own deadline a blocking SendMessage is cut by the store deadline (its 504 comes first). */
const BLOCKING_GRACE_MS = 500;

/** True for a SendMessage that waits for the task (the default; returnImmediately: true answers at once). */
export function waitsForTask(method: A2aMethod, params: unknown): boolean {
  if (method !== "SendMessage") return false;
  const configuration = (params as { configuration?: { returnImmediately?: boolean } }).configuration;
  return configuration?.returnImmediately !== true;
}

/** Answers one POST to `/a2a/<profileName>`. Never throws. */
export async function serveJsonRpc(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const account = new RequestAccount(context, profileName);
  let id: JsonRpcId = null;
  const { server } = context.config;
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = profileOf(context, profileName, request);
    deadline.arm(server.storeTimeoutSeconds * 1000, server.storeTimeoutSeconds);
    const client = await admit(context, profile, request, deadline);
    account.clientId = client.id;
    checkVersion(request);
    const value = parseJsonBody(await readCappedBody(request, server.maxBodyBytes), server.maxJsonDepth);
    id = idOf(value);
    const envelope = checkJsonRpcRequest(value);
    if (!envelope.ok) throw new InvalidRequestError(`Invalid Request${summary(envelope.violations)}`);
    const method = envelope.value.method;
    account.method = method;
    if (!isA2aMethod(method)) throw new MethodNotFoundError(method);
    const checked = checkParams(method, envelope.value.params);
    if (!checked.ok) throw new InvalidParamsError(`Invalid params${summary(checked.violations)}`, checked.violations);
    account.params = checked.value;
    // A blocking SendMessage may wait up to its own deadline (then 504); the store deadline cuts it only past that.
    if (waitsForTask(method, checked.value)) {
      const seconds = server.blockingWaitSeconds;
      deadline.arm(seconds * 1000 + BLOCKING_GRACE_MS, seconds, account.startedAt);
    }
    const call = {
      context,
      client,
      profile,
      params: checked.value,
      requestId: context.nextRequestId(),
      startedAt: account.startedAt,
      signal: deadline.signal,
    };
    // A streaming method answers with its SSE response once the stream has started; its earlier errors land below.
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
      const sink = new SseEventSink(context, jsonRpcFraming(id), request.signal, client.id);
      opened.open(sink);
      account.answered(0, undefined);
      return sink.response;
    }
    const result = await deadline.bound(run(method, call as OperationCall<typeof method>));
    account.answered(0, undefined, result);
    return resultResponse(id, result);
  } catch (error) {
    const answer = errorAnswer(error, id);
    if (answer.unexpected) {
      context.logger.error({ err: error, method: account.method, profile: profileName }, "request failed");
    }
    account.answered(answer.body.error.code, error);
    return errorResponse(answer);
  } finally {
    deadline.clear();
  }
}
