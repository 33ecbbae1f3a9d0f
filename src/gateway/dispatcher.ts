// Handles one JSON-RPC POST to a profile's endpoint, in a fixed order: body (size cap) → JSON → envelope →
// credentials → profile permission → A2A-Version → method → params → handler. Nothing touches Redis before the
// credentials are checked, and nothing is written before the params are valid. Every failure goes through errorAnswer;
// a streaming method's failure before its first event too, so that it is a plain JSON answer and not a stream.
import {
  type A2aMethod,
  checkJsonRpcRequest,
  checkParams,
  InvalidParamsError,
  InvalidRequestError,
  isA2aMethod,
  type JsonRpcId,
  MethodNotFoundError,
  VersionNotSupportedError,
  type Violation,
} from "../protocol/index.ts";
import { PROTOCOL_VERSION } from "./agent-card.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { EndpointNotFoundError, errorAnswer, errorResponse } from "./jsonrpc-errors.ts";
import {
  isStreamMethod,
  METHODS,
  type MethodCall,
  type MethodHandler,
  STREAM_METHODS,
  type StreamCall,
  type StreamMethod,
  type StreamMethodHandler,
} from "./methods/index.ts";
import { parseJsonBody, readCappedBody } from "./request-body.ts";
import { recordRequest, taskIdOf } from "./request-log.ts";
import { StoreDeadline } from "./store-deadline.ts";

/** The versions this endpoint serves: Major.Minor, with any patch number ignored. */
export const SERVED_VERSIONS = [PROTOCOL_VERSION] as const;
const SERVED_VERSION = /^1\.0(\.\d+)?$/;

/** Reads `A2A-Version` (header, or the query parameter of that name); throws -32009 unless it is 1.0. */
export function checkVersion(request: Request): void {
  const header = request.headers.get("a2a-version") ?? new URL(request.url).searchParams.get("A2A-Version") ?? "";
  const requested = header.trim();
  if (!SERVED_VERSION.test(requested)) throw new VersionNotSupportedError(requested, SERVED_VERSIONS);
}

function idOf(value: unknown): JsonRpcId {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

function summary(violations: readonly Violation[]): string {
  const first = violations[0];
  if (!first) return "";
  return `: ${first.field === "" ? "" : `${first.field}: `}${first.description}`;
}

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { headers: { "Content-Type": "application/json" } });
}

function run<M extends Exclude<A2aMethod, StreamMethod>>(method: M, call: MethodCall<M>): Promise<unknown> {
  const handler: MethodHandler<M> = METHODS[method];
  return handler(call);
}

function stream<M extends StreamMethod>(method: M, call: StreamCall<M>): Promise<Response> {
  const handler: StreamMethodHandler<M> = STREAM_METHODS[method];
  return handler(call);
}

/** How much later than its own deadline a blocking SendMessage is cut by the store deadline (its 504 comes first). */
const BLOCKING_GRACE_MS = 500;

/** True for a SendMessage that waits for the task (the default; returnImmediately: true answers at once). */
function waitsForTask(method: A2aMethod, params: unknown): boolean {
  if (method !== "SendMessage") return false;
  const configuration = (params as { configuration?: { returnImmediately?: boolean } }).configuration;
  return configuration?.returnImmediately !== true;
}

/** Answers one POST to `/a2a/<profileName>`. Never throws. */
export async function dispatch(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const startedAt = performance.now();
  let id: JsonRpcId = null;
  let method = "";
  let clientId: string | undefined;
  let params: unknown;
  const answered = (code: number, error: unknown, result?: unknown) =>
    recordRequest(context, {
      method,
      profile: profileName,
      clientId,
      taskId: taskIdOf(params, result),
      code,
      error,
      startedAt,
    });
  const { server } = context.config;
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = context.profiles.get(profileName);
    if (!profile) throw new EndpointNotFoundError(new URL(request.url).pathname);
    const value = parseJsonBody(await readCappedBody(request, server.maxBodyBytes));
    id = idOf(value);
    const envelope = checkJsonRpcRequest(value);
    if (!envelope.ok) throw new InvalidRequestError(`Invalid Request${summary(envelope.violations)}`);
    method = envelope.value.method;
    deadline.arm(server.storeTimeoutSeconds * 1000, server.storeTimeoutSeconds);
    const client = await deadline.bound(context.auth.authenticate(request.headers));
    clientId = client.id;
    context.auth.authorize(client, profileName);
    checkVersion(request);
    if (!isA2aMethod(method)) throw new MethodNotFoundError(method);
    const checked = checkParams(method, envelope.value.params);
    if (!checked.ok) throw new InvalidParamsError(`Invalid params${summary(checked.violations)}`, checked.violations);
    params = checked.value;
    // A blocking SendMessage may wait up to its own deadline (then 504); the store deadline cuts it only past that.
    if (waitsForTask(method, params)) {
      const seconds = server.blockingWaitSeconds;
      deadline.arm(seconds * 1000 + BLOCKING_GRACE_MS, seconds, startedAt);
    }
    const call = {
      context,
      client,
      profile,
      params: checked.value,
      requestId: context.nextRequestId(),
      startedAt,
      signal: deadline.signal,
    };
    // A streaming method answers with its SSE response once the stream has started; its earlier errors land below.
    if (isStreamMethod(method)) {
      const response = await deadline.bound(stream(method, { ...call, rpcId: id } as StreamCall<typeof method>));
      deadline.clear();
      answered(0, undefined);
      return response;
    }
    const result = await deadline.bound(run(method, call as MethodCall<typeof method>));
    answered(0, undefined, result);
    return json({ jsonrpc: "2.0", id, result });
  } catch (error) {
    const answer = errorAnswer(error, id);
    if (answer.unexpected) context.logger.error({ err: error, method, profile: profileName }, "request failed");
    answered(answer.body.error.code, error);
    return errorResponse(answer);
  } finally {
    deadline.clear();
  }
}
