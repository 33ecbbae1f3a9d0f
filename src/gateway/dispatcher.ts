// Handles one JSON-RPC POST to a profile's endpoint, in a fixed order: body (size cap) → JSON → envelope →
// credentials → profile permission → A2A-Version → method → params → handler. Nothing touches Redis before the
// credentials are checked, and nothing is written before the params are valid. Every failure goes through errorAnswer.
import {
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  VersionNotSupportedError,
} from "../journal/index.ts";
import { PROTOCOL_VERSION } from "./agent-card.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { EndpointNotFoundError, errorAnswer, errorResponse } from "./jsonrpc-errors.ts";
import { METHODS, type MethodCall, type MethodHandler } from "./methods/index.ts";
import { parseJsonBody, readCappedBody } from "./request-body.ts";
import {
  type A2aMethod,
  checkJsonRpcRequest,
  checkParams,
  isA2aMethod,
  type JsonRpcId,
  type Violation,
} from "./schema/index.ts";

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

function run<M extends A2aMethod>(method: M, call: MethodCall<M>): Promise<unknown> {
  const handler: MethodHandler<M> = METHODS[method];
  return handler(call);
}

/** Answers one POST to `/a2a/<profileName>`. Never throws. */
export async function dispatch(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const startedAt = performance.now();
  let id: JsonRpcId = null;
  let method = "";
  try {
    const profile = context.profiles.get(profileName);
    if (!profile) throw new EndpointNotFoundError(new URL(request.url).pathname);
    const value = parseJsonBody(await readCappedBody(request, context.config.server.maxBodyBytes));
    id = idOf(value);
    const envelope = checkJsonRpcRequest(value);
    if (!envelope.ok) throw new InvalidRequestError(`Invalid Request${summary(envelope.violations)}`);
    method = envelope.value.method;
    const client = await context.auth.authenticate(request.headers);
    context.auth.authorize(client, profileName);
    checkVersion(request);
    if (!isA2aMethod(method)) throw new MethodNotFoundError(method);
    const checked = checkParams(method, envelope.value.params);
    if (!checked.ok) throw new InvalidParamsError(`Invalid params${summary(checked.violations)}`, checked.violations);
    const result = await run(method, {
      context,
      client,
      profile,
      params: checked.value,
      requestId: context.nextRequestId(),
      startedAt,
      signal: request.signal,
    });
    return json({ jsonrpc: "2.0", id, result });
  } catch (error) {
    const answer = errorAnswer(error, id);
    if (answer.unexpected) context.logger.error({ err: error, method, profile: profileName }, "request failed");
    return errorResponse(answer);
  }
}
