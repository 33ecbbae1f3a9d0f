// One webhook attempt: check the URL against the policy, sign, POST once to the checked address, classify the answer.
// It never retries, sleeps or follows a redirect itself: the caller records the outcome and schedules the next attempt.
import type { AuthenticationInfo, StreamResponse } from "../protocol/index.ts";
import { type AddressPolicy, checkWebhookUrl } from "./address-policy.ts";
import { type Connector, createHttpConnector, WebhookTimeoutError } from "./http-connector.ts";
import type { Resolver } from "./resolver.ts";
import { classifyStatus, honoursRetryAfter, parseRetryAfter } from "./retry-policy.ts";
import { signWebhook } from "./signature.ts";

export const WEBHOOK_CONTENT_TYPE = "application/a2a+json";
export const NOTIFICATION_TOKEN_HEADER = "x-a2a-notification-token";

export interface Delivery {
  /** The `webhook-id`: the same on every retry of this delivery, so receivers can drop duplicates. */
  id: string;
  url: string;
  /** Sent as is, without a JSON-RPC envelope. */
  body: StreamResponse;
  /** The config's `token`, sent as `X-A2A-Notification-Token`. */
  token?: string;
  /** The config's `authentication`, sent as `Authorization: <scheme> <credentials>`. */
  authentication?: AuthenticationInfo;
  /** W3C Trace Context (`traceparent`, `tracestate`) of the delivery's span, sent as they are. */
  traceHeaders?: Record<string, string>;
}

export interface DeliverDeps {
  policy: AddressPolicy;
  /** Signing secrets (`whsec_<base64>` or plain); one signature each. Validate them at start with `signingKey`. */
  secrets: readonly string[];
  /** Bound on the name lookup, and separately on the request until its response head. */
  timeoutMs: number;
  resolve?: Resolver;
  /** Opens the connection; tests inject one that refuses any non-loopback address. */
  request?: Connector;
  /** Clock in ms (for `webhook-timestamp` and HTTP-date `Retry-After`). Default Date.now. */
  nowMs?: () => number;
}

/**
 * - `delivered`: 2xx. - `retry`: 429, 5xx, network error, timeout, or a name that did not resolve; `retryAfterMs`
 *   from a 429/503 `Retry-After`. - `disable`: 410, stop using this config. - `give-up`: any other status,
 *   3xx included (never followed), or headers that cannot be sent. - `refused`: the address policy said no.
 */
export type DeliveryOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; reason: string; status?: number; retryAfterMs?: number }
  | { kind: "disable"; reason: string; status: number }
  | { kind: "give-up"; reason: string; status?: number }
  | { kind: "refused"; reason: string };

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

function withDeadline<T>(work: Promise<T>, timeoutMs: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** The delivery's own headers, or the reason they cannot be sent (no CR/LF injection, no non-ASCII). */
function configHeaders(delivery: Delivery): Record<string, string> | string {
  const out: Record<string, string> = {};
  if (delivery.id === "" || !HEADER_VALUE.test(delivery.id)) return "invalid webhook id";
  const auth = delivery.authentication;
  if (auth !== undefined) {
    if (!HTTP_TOKEN.test(auth.scheme)) return "invalid authentication scheme";
    const credentials = auth.credentials ?? "";
    if (!HEADER_VALUE.test(credentials)) return "invalid authentication credentials";
    out.authorization = credentials === "" ? auth.scheme : `${auth.scheme} ${credentials}`;
  }
  if (delivery.token !== undefined) {
    if (!HEADER_VALUE.test(delivery.token)) return "invalid notification token";
    out[NOTIFICATION_TOKEN_HEADER] = delivery.token;
  }
  return out;
}

function networkReason(error: unknown, timeoutMs: number): string {
  if (error instanceof WebhookTimeoutError) return `timeout after ${timeoutMs} ms`;
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return `network error ${error.code}`;
  }
  return `network error ${error instanceof Error ? error.message : String(error)}`;
}

function statusOutcome(status: number, headers: Readonly<Record<string, string>>, nowMs: number): DeliveryOutcome {
  switch (classifyStatus(status)) {
    case "delivered":
      return { kind: "delivered", status };
    case "disable":
      return { kind: "disable", reason: `http status ${status} gone`, status };
    case "retry": {
      const retryAfterMs = honoursRetryAfter(status) ? parseRetryAfter(headers["retry-after"], nowMs) : undefined;
      const reason = `http status ${status}`;
      return retryAfterMs === undefined
        ? { kind: "retry", reason, status }
        : { kind: "retry", reason, status, retryAfterMs };
    }
    case "give-up": {
      if (status < 300 || status >= 400) return { kind: "give-up", reason: `http status ${status}`, status };
      const location = headers.location;
      const to = location === undefined ? "" : ` to ${location.slice(0, 200)}`;
      return { kind: "give-up", reason: `redirect ${status}${to} not followed`, status };
    }
  }
}

/** Sends ONE attempt of `delivery` and says what it means; never throws for anything the receiver or network does. */
export async function deliverOnce(delivery: Delivery, deps: DeliverDeps): Promise<DeliveryOutcome> {
  const now = deps.nowMs ?? Date.now;
  const own = configHeaders(delivery);
  if (typeof own === "string") return { kind: "give-up", reason: own };
  const check = await withDeadline(checkWebhookUrl(delivery.url, deps.policy, deps.resolve), deps.timeoutMs);
  if (check === "timeout") return { kind: "retry", reason: `dns lookup timeout after ${deps.timeoutMs} ms` };
  if (!check.ok) {
    return check.transient ? { kind: "retry", reason: check.reason } : { kind: "refused", reason: check.reason };
  }
  const body = JSON.stringify(delivery.body);
  const headers = {
    "content-type": WEBHOOK_CONTENT_TYPE,
    "user-agent": "a2a-runtime",
    ...delivery.traceHeaders,
    ...own,
    ...signWebhook(delivery.id, Math.floor(now() / 1000), body, deps.secrets),
  };
  const connect = deps.request ?? createHttpConnector();
  try {
    const response = await connect({
      url: check.url,
      address: check.address,
      family: check.family,
      headers,
      body,
      timeoutMs: deps.timeoutMs,
    });
    return statusOutcome(response.status, response.headers, now());
  } catch (error) {
    return { kind: "retry", reason: networkReason(error, deps.timeoutMs) };
  }
}
