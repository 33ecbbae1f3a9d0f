// When to retry a webhook and how long to wait: the HTTP status rules, Retry-After, and jittered backoff.
// Pure arithmetic: no clock and no randomness of its own unless the caller leaves the defaults.

/** What one attempt's HTTP status means for the delivery. */
export type StatusClass = "delivered" | "retry" | "disable" | "give-up";

/** 2xx delivered; 410 disables the config; 429 and 5xx retry; every other status (3xx, 4xx, 1xx) gives up. */
export function classifyStatus(status: number): StatusClass {
  if (status >= 200 && status < 300) return "delivered";
  if (status === 410) return "disable";
  if (status === 429 || (status >= 500 && status < 600)) return "retry";
  return "give-up";
}

/** Whether a `Retry-After` header is honoured for this status (429 and 503, as HTTP defines it). */
export function honoursRetryAfter(status: number): boolean {
  return status === 429 || status === 503;
}

/**
 * A `Retry-After` value in milliseconds from `nowMs`: delay-seconds (`120`) or an HTTP-date (in the past → 0).
 * `undefined` when the header is absent or malformed.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

export interface BackoffOptions {
  /** First retry's ceiling in ms; it doubles per attempt. Default 1000. */
  baseMs?: number;
  /** Ceiling of any backoff delay in ms. Default 300000 (5 min). */
  capMs?: number;
  /** Ceiling on a receiver's `Retry-After` in ms, so one answer cannot stall a task's deliveries. Default 3600000. */
  retryAfterCapMs?: number;
  /** Uniform in [0, 1); default Math.random. */
  random?: () => number;
}

/**
 * Milliseconds to wait before the next attempt after failed attempt number `attempt` (1 = the first attempt).
 * Without `retryAfterMs`: full jitter, uniform in [0, min(capMs, baseMs * 2^(attempt-1))). With it: the receiver's
 * delay, at most `retryAfterCapMs`.
 */
export function nextDelayMs(attempt: number, retryAfterMs?: number, options: BackoffOptions = {}): number {
  const { baseMs = 1000, capMs = 300_000, retryAfterCapMs = 3_600_000, random = Math.random } = options;
  if (retryAfterMs !== undefined) return Math.min(Math.max(0, retryAfterMs), retryAfterCapMs);
  const exponent = Math.max(0, Math.min(52, Math.floor(attempt) - 1) || 0);
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  return Math.floor(random() * ceiling);
}
