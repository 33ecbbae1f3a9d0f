// The JSON-RPC binding: one POST to a profile's endpoint, in a fixed order: profile → credentials (headers only) →
// permission → A2A-Version (1.0, or 0.3 when absent) → body (size cap) → JSON → envelope → method → params →
// operation. Nothing touches Redis before the credentials are checked, no body is read for a request without a valid
// key, and nothing is written before the params are valid. The version picks the dialect (method names, params and
// result shapes); every failure goes through the protocol's error table; a streaming operation's failure before its
// first event too, so that it is a plain JSON answer and not a stream (0.3 excepted: see its dialect). A request
// without an `id` is a notification: it is carried out and answered with no body.
import {
  type A2aCall,
  checkJsonRpcRequest,
  describeError,
  InvalidRequestError,
  type JsonRpcId,
} from "../../protocol/index.ts";
import { SseEventSink } from "../event-sink.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { isStreamMethod } from "../operations/index.ts";
import { parseJsonBody, readCappedBody } from "../request-body.ts";
import { admitRequest, profileOf, RequestAccount, requestedVersion } from "../request-steps.ts";
import { runOperation } from "../run-operation.ts";
import { StoreDeadline } from "../store-deadline.ts";
import { JSONRPC_VERSIONS, V03_DIALECT } from "./jsonrpc-0.3.ts";
import { type JsonRpcDialect, summary, V1_DIALECT } from "./jsonrpc-dialect.ts";
import { errorAnswer, errorResponse, jsonRpcFraming, resultResponse } from "./jsonrpc-frames.ts";

const DIALECTS = { "1.0": V1_DIALECT, "0.3": V03_DIALECT } as const;

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
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
  const account = new RequestAccount(context, profileName, "jsonrpc");
  let id: JsonRpcId = null;
  let notification = false;
  let dialect: JsonRpcDialect = V1_DIALECT;
  let streamOpening = false;
  const { server } = context.config;
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = profileOf(context, profileName, request);
    const client = await admitRequest(context, profile, request, deadline, account, JSONRPC_VERSIONS);
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
    streamOpening = isStreamMethod(method);
    const framing = jsonRpcFraming(id, dialect);
    const answer = await runOperation(
      { context, profile, client, account, deadline, method, params },
      (clientId) => new SseEventSink(context, framing, request.signal, clientId),
    );
    if ("sink" in answer) {
      // A streaming notification stored its task; nobody reads the stream, so it ends at once and frees its leases.
      if (notification) {
        await answer.sink.response.body?.cancel();
        return silentAnswer();
      }
      return answer.sink.response;
    }
    if (notification) return silentAnswer();
    return resultResponse(id, dialect.result(method, answer.result));
  } catch (error) {
    account.failed(error);
    if (notification) return silentAnswer(error);
    const answer = errorAnswer(error, id);
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
