// The HTTP+JSON binding: every A2A method at its own route under a profile's endpoint, in a fixed order: profile →
// route (HTTP method and path; no Redis) → credentials (headers only) → permission → rate → A2A-Version → body
// (Content-Type, size cap, nesting) or query → fields → params → operation. The steps and the operations are the
// JSON-RPC binding's; only the framing differs: HTTP statuses from the error table, google.rpc.Status error bodies.
import { SseEventSink } from "../event-sink.ts";
import type { GatewayContext } from "../gateway-context.ts";
import { admitRequest, checkedParams, profileOf, RequestAccount } from "../request-steps.ts";
import { runOperation } from "../run-operation.ts";
import { StoreDeadline } from "../store-deadline.ts";
import { answerMediaType, REST_FRAMING, restErrorResponse, restResultResponse } from "./rest-frames.ts";
import { requestFields } from "./rest-params.ts";
import { matchRoute } from "./rest-routes.ts";

/** The path below `/a2a/<profile>/`, split at "/" and still percent-encoded. */
function routeSegments(request: Request): { segments: string[]; path: string } {
  const path = new URL(request.url).pathname;
  return { segments: path.split("/").slice(3), path };
}

/** Answers one request under `/a2a/<profileName>/`. Never throws. */
export async function serveRest(context: GatewayContext, profileName: string, request: Request): Promise<Response> {
  const account = new RequestAccount(context, profileName, "rest");
  const mediaType = answerMediaType(request);
  // Every Redis wait of the request is bounded: a paused Redis gets a 503 STORE_TIMEOUT, not a hanging request.
  const deadline = new StoreDeadline(request.signal);
  try {
    const profile = profileOf(context, profileName, request);
    const { segments, path } = routeSegments(request);
    const route = matchRoute(request.method, segments, path);
    const method = route.method;
    account.method = method;
    const client = await admitRequest(context, profile, request, deadline, account);
    const params = checkedParams(method, await requestFields(route, request, context.config.server));
    account.params = params;
    const answer = await runOperation(
      { context, profile, client, account, deadline, method, params },
      (clientId) => new SseEventSink(context, REST_FRAMING, request.signal, clientId),
    );
    return "sink" in answer ? answer.sink.response : restResultResponse(answer.result, mediaType);
  } catch (error) {
    return restErrorResponse(account.failed(error), mediaType);
  } finally {
    deadline.clear();
  }
}
