// The JSON-RPC binding: one POST to a profile's endpoint, in a fixed order: profile → credentials (headers only) →
// permission → A2A-Version → body (size cap) → JSON → envelope → method → params → operation. Nothing touches Redis
// before the credentials are checked, no body is read for a request without a valid key, and nothing is written
// before the params are valid. Every failure goes through the protocol's error table; a streaming operation's failure
// before its first event too, so that it is a plain JSON answer and not a stream.
import {
  checkJsonRpcRequest,
  InvalidRequestError,
  isA2aMethod,
  type JsonRpcId,
  MethodNotFoundError,
} from "../../protocol/index.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { parseJsonBody, readCappedBody } from "../request-body.ts";
import { admitRequest, checkedParams, profileOf, RequestAccount, summary } from "../request-steps.ts";
import { runOperation } from "../run-operation.ts";
import { StoreDeadline } from "../store-deadline.ts";
import { errorAnswer, errorResponse, jsonRpcFraming, resultResponse } from "./jsonrpc-frames.ts";

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/** Answers one POST to `/a2a/<profileName>`. Never throws. */
export async function serveJsonRpc(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const account = new RequestAccount(context, profileName, "jsonrpc");
  let id: JsonRpcId = null;
  const { server } = context.config;
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = profileOf(context, profileName, request);
    const client = await admitRequest(context, profile, request, deadline, account);
    const value = parseJsonBody(await readCappedBody(request, server.maxBodyBytes), server.maxJsonDepth);
    id = idOf(value);
    const envelope = checkJsonRpcRequest(value);
    if (!envelope.ok) throw new InvalidRequestError(`Invalid Request${summary(envelope.violations)}`);
    const method = envelope.value.method;
    account.method = method;
    if (!isA2aMethod(method)) throw new MethodNotFoundError(method);
    const params = checkedParams(method, envelope.value.params);
    account.params = params;
    const answer = await runOperation(
      { context, request, profile, client, account, deadline, method, params },
      jsonRpcFraming(id),
    );
    return "stream" in answer ? answer.stream : resultResponse(id, answer.result);
  } catch (error) {
    account.failed(error);
    return errorResponse(errorAnswer(error, id));
  } finally {
    deadline.clear();
  }
}
