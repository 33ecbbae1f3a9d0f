// The JSON-RPC binding: one POST to a profile's endpoint, in a fixed order: profile → credentials (headers only) →
// permission → A2A-Version (1.0, or 0.3 when absent) → body (size cap) → JSON → envelope → method → params →
// operation. Nothing touches Redis before the credentials are checked, no body is read for a request without a valid
// key, and nothing is written before the params are valid. The version picks the dialect (method names, params and
// result shapes); every failure goes through the protocol's error table; a streaming operation's failure before its
// first event too, so that it is a plain JSON answer and not a stream (0.3 excepted: see its dialect). A request
// without an `id` is a notification: it is carried out and answered with no body.
import {
  type A2aCall,
  type A2aMethod,
  checkJsonRpcRequest,
  describeError,
  InvalidRequestError,
  type JsonRpcId,
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
import { admit, profileOf, RequestAccount, requestedVersion } from "../request-steps.ts";
import { StoreDeadline } from "../store-deadline.ts";
import type { TaskStreamSource } from "../task-stream.ts";
import { JSONRPC_VERSIONS, V03_DIALECT } from "./jsonrpc-0.3.ts";
import { type JsonRpcDialect, summary, V1_DIALECT } from "./jsonrpc-dialect.ts";
import { errorAnswer, errorResponse, jsonRpcFraming, resultResponse } from "./jsonrpc-frames.ts";

export { summary } from "./jsonrpc-dialect.ts";

const DIALECTS = { "1.0": V1_DIALECT, "0.3": V03_DIALECT } as const;

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
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

/** A notification has nobody to wait for: its SendMessage answers (with nothing) as soon as the task is stored. */
function withoutWaiting(call: A2aCall): A2aCall {
  if (call.method !== "SendMessage") return call;
  const { params } = call;
  return {
    method: call.method,
    params: { ...params, configuration: { ...params.configuration, returnImmediately: true } },
  };
}

/** The answer to a notification: no body; 204, or the error's own HTTP status when it has one (401, 413, 503, …). */
function silentAnswer(error?: unknown): Response {
  if (error === undefined) return new Response(null, { status: 204 });
  const described = describeError(error);
  const status = described.row.jsonRpcStatus === 200 ? 204 : described.row.jsonRpcStatus;
  return new Response(null, { status, headers: described.headers });
}

/** Answers one POST to `/a2a/<profileName>`. Never throws. */
export async function serveJsonRpc(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const account = new RequestAccount(context, profileName);
  let id: JsonRpcId = null;
  let notification = false;
  let dialect: JsonRpcDialect = V1_DIALECT;
  let streamOpening = false;
  const { server } = context.config;
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = profileOf(context, profileName, request);
    deadline.arm(server.storeTimeoutSeconds * 1000, server.storeTimeoutSeconds);
    const client = await admit(context, profile, request, deadline);
    account.clientId = client.id;
    dialect = DIALECTS[requestedVersion(request, JSONRPC_VERSIONS)];
    const value = parseJsonBody(await readCappedBody(request, server.maxBodyBytes), server.maxJsonDepth);
    id = idOf(value);
    const envelope = checkJsonRpcRequest(value);
    if (!envelope.ok) throw new InvalidRequestError(`Invalid Request${summary(envelope.violations)}`);
    notification = !Object.hasOwn(envelope.value, "id");
    account.method = envelope.value.method;
    const read = dialect.read(envelope.value.method, envelope.value.params);
    const { method, params } = notification ? withoutWaiting(read) : read;
    account.method = method;
    account.params = params;
    // A blocking SendMessage may wait up to its own deadline (then 504); the store deadline cuts it only past that.
    if (waitsForTask(method, params)) {
      const seconds = server.blockingWaitSeconds;
      deadline.arm(seconds * 1000 + BLOCKING_GRACE_MS, seconds, account.startedAt);
    }
    const call = {
      context,
      client,
      profile,
      params,
      requestId: context.nextRequestId(),
      startedAt: account.startedAt,
      signal: deadline.signal,
    };
    // A streaming method answers with its SSE response once the stream has started; its earlier errors land below.
    if (isStreamMethod(method)) {
      streamOpening = true;
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
      account.answered(0, undefined);
      if (notification) {
        opened.abandon();
        return silentAnswer();
      }
      const sink = new SseEventSink(context, jsonRpcFraming(id, dialect), request.signal, client.id);
      opened.open(sink);
      return sink.response;
    }
    const result = await deadline.bound(run(method, call as OperationCall<typeof method>));
    account.answered(0, undefined, result);
    if (notification) return silentAnswer();
    return resultResponse(id, dialect.result(method, result));
  } catch (error) {
    const answer = errorAnswer(error, id);
    if (answer.unexpected) {
      context.logger.error({ err: error, method: account.method, profile: profileName }, "request failed");
    }
    account.answered(answer.body.error.code, error);
    if (notification) return silentAnswer(error);
    if (streamOpening && dialect.streamsFailures && answer.status === 200 && account.clientId !== undefined) {
      const sink = new SseEventSink(context, jsonRpcFraming(id, dialect), request.signal, account.clientId);
      sink.fail(error);
      return sink.response;
    }
    return errorResponse(answer);
  } finally {
    deadline.clear();
  }
}
