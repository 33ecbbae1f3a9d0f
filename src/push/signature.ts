// Standard Webhooks signatures: `webhook-id`, `webhook-timestamp`, `webhook-signature` (v1, HMAC-SHA256).
// Signs what is sent byte for byte; verifies for receivers and tests in constant time. Never logs a secret.
import { createHmac, timingSafeEqual } from "node:crypto";

export const WEBHOOK_ID_HEADER = "webhook-id";
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";

/** The default window, in seconds, a receiver accepts a timestamp in (either side of its clock). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

const WHSEC_PREFIX = "whsec_";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;

export class InvalidSigningSecretError extends Error {
  constructor() {
    super("A signing secret that starts with whsec_ must continue with non-empty base64");
  }
}

/**
 * The HMAC key of a secret: `whsec_<base64>` (the Standard Webhooks form) is the decoded base64; any other
 * string is its UTF-8 bytes. Throws InvalidSigningSecretError for `whsec_` followed by anything but base64.
 */
export function signingKey(secret: string): Buffer {
  if (!secret.startsWith(WHSEC_PREFIX)) return Buffer.from(secret, "utf8");
  const encoded = secret.slice(WHSEC_PREFIX.length);
  if (encoded === "" || !BASE64.test(encoded)) throw new InvalidSigningSecretError();
  return Buffer.from(encoded, "base64");
}

function sign(key: Buffer, id: string, timestamp: string, body: string | Uint8Array): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
}

// A type alias, not an interface, so that it also fits HeaderSource's index signature.
export type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  /** Absent only when no secret is configured. */
  "webhook-signature"?: string;
};

/**
 * The three headers of one attempt. `id` stays the same across retries of a delivery; `timestampSeconds` is the
 * attempt's Unix time. One `v1,<base64>` signature per secret, space-separated, so receivers can rotate keys.
 */
export function signWebhook(
  id: string,
  timestampSeconds: number,
  body: string,
  secrets: readonly string[],
): WebhookHeaders {
  const timestamp = String(Math.floor(timestampSeconds));
  const headers: WebhookHeaders = { "webhook-id": id, "webhook-timestamp": timestamp };
  if (secrets.length === 0) return headers;
  const signatures = secrets.map((secret) => `v1,${sign(signingKey(secret), id, timestamp, body).toString("base64")}`);
  return { ...headers, "webhook-signature": signatures.join(" ") };
}

/** Request headers as a Fetch `Headers` or a Node `IncomingHttpHeaders`-like record (lower-case names). */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return typeof value === "string" ? value : undefined;
}

export type WebhookVerification = { ok: true; id: string; timestampSeconds: number } | { ok: false; reason: string };

/**
 * Checks a received webhook: the timestamp is within `toleranceSeconds` of `nowSeconds`, and some `v1` signature
 * matches the raw body under one of `secrets`. `body` must be the bytes as received, before any JSON parsing.
 */
export function verifyWebhook(
  headers: HeaderSource,
  body: string | Uint8Array,
  secrets: readonly string[],
  toleranceSeconds: number = DEFAULT_TOLERANCE_SECONDS,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): WebhookVerification {
  const id = header(headers, WEBHOOK_ID_HEADER);
  const timestamp = header(headers, WEBHOOK_TIMESTAMP_HEADER);
  const signature = header(headers, WEBHOOK_SIGNATURE_HEADER);
  if (id === undefined || timestamp === undefined || signature === undefined) {
    return { ok: false, reason: "missing webhook headers" };
  }
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: "invalid timestamp" };
  const timestampSeconds = Number(timestamp);
  if (Math.abs(nowSeconds - timestampSeconds) > toleranceSeconds) {
    return { ok: false, reason: "timestamp outside tolerance" };
  }
  if (secrets.length === 0) return { ok: false, reason: "no secret configured" };
  const expected = secrets.map((secret) => sign(signingKey(secret), id, timestamp, body));
  const received = signature
    .split(" ")
    .filter((entry) => entry.startsWith("v1,"))
    .map((entry) => Buffer.from(entry.slice(3), "base64"));
  const matches = received.some((candidate) =>
    expected.some((digest) => candidate.length === digest.length && timingSafeEqual(candidate, digest)),
  );
  return matches ? { ok: true, id, timestampSeconds } : { ok: false, reason: "no matching signature" };
}
