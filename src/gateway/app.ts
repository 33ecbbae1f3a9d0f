// The Elysia app: agent cards, health, metrics, and each profile's endpoint of every binding (JSON-RPC at
// POST /a2a/<profile>, HTTP+JSON under /a2a/<profile>/). Used through app.handle(request); the runtime seam (serve.ts)
// binds it to a port. Unknown paths answer 404 in JSON-RPC form, unknown routes under a profile in HTTP+JSON form.
import { Elysia } from "elysia";
import { EndpointNotFoundError } from "../protocol/index.ts";
import { serveJsonRpc } from "./bindings/jsonrpc.ts";
import { errorAnswer, errorResponse } from "./bindings/jsonrpc-frames.ts";
import { serveRest } from "./bindings/rest.ts";
import type { GatewayContext } from "./gateway-context.ts";
import { healthz, readyz } from "./health.ts";

/**
 * The request as the router must see it. Elysia takes the path to start at the first "/" from index 11 of the URL
 * ("http://" and a host of 4 characters): with a shorter Host header it would take part of the path for the host and
 * serve `/zz/metrics` as `/metrics`, which lets a client route around a proxy's path rules. Such a request is rebuilt
 * on a fixed host; routing never depends on the Host header.
 */
export function routable(request: Request): Request {
  const url = request.url;
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart >= 11) return request;
  return new Request(`http://localhost${pathStart < 0 ? "/" : url.slice(pathStart)}`, request);
}

function notFound(request: Request): Response {
  return errorResponse(errorAnswer(new EndpointNotFoundError(new URL(request.url).pathname), null));
}

export function createGatewayApp(context: GatewayContext) {
  return (
    new Elysia()
      .onError(({ code, error, request }) => {
        if (code === "NOT_FOUND") return notFound(request);
        context.logger.error({ err: error, code }, "unhandled gateway error");
        const answer = errorAnswer(error, null);
        return errorResponse({ ...answer, status: 500 });
      })
      .get("/healthz", () => healthz())
      .get("/readyz", () => readyz(context))
      .get("/metrics", ({ request }) => context.metrics.respond(request))
      .get("/.well-known/jwks.json", ({ request }) => context.cards.jwks() ?? notFound(request))
      .get(
        "/.well-known/agent-card.json",
        ({ request }) => context.cards.respond(undefined, request) ?? notFound(request),
      )
      .get(
        "/a2a/:profile/.well-known/agent-card.json",
        ({ params, request }) => context.cards.respond(params.profile, request) ?? notFound(request),
      )
      .post("/a2a/:profile", ({ params, request }) => serveJsonRpc(context, params.profile, request), { parse: "none" })
      // Any HTTP method: the binding answers 405 itself, in its own error form, for one its route does not serve.
      .all("/a2a/:profile/*", ({ params, request }) => serveRest(context, params.profile, request), { parse: "none" })
  );
}

export type GatewayApp = ReturnType<typeof createGatewayApp>;
