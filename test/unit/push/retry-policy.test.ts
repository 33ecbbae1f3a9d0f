// Unit tests of the retry rules: which statuses retry, Retry-After parsing, and the bounds of jittered backoff.
import { describe, expect, test } from "bun:test";
import { classifyStatus, nextDelayMs, parseRetryAfter } from "../../../src/push/retry-policy.ts";

describe("classifyStatus", () => {
  test("each status class", () => {
    expect([200, 201, 204, 299].map(classifyStatus)).toEqual(["delivered", "delivered", "delivered", "delivered"]);
    expect(classifyStatus(410)).toBe("disable");
    expect([429, 500, 502, 503, 504, 599].map(classifyStatus)).toEqual(new Array(6).fill("retry"));
    expect([301, 302, 307, 308, 400, 401, 403, 404, 408, 413, 422, 101].map(classifyStatus)).toEqual(
      new Array(12).fill("give-up"),
    );
  });
});

describe("parseRetryAfter", () => {
  const now = Date.parse("2025-06-01T12:00:00Z");
  test("delay-seconds", () => {
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
  });
  test("an HTTP-date, and one in the past", () => {
    expect(parseRetryAfter("Sun, 01 Jun 2025 12:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 01 Jun 2025 11:00:00 GMT", now)).toBe(0);
  });
  test("absent or malformed", () => {
    for (const value of [undefined, "", "-5", "1.5", "soon", "12 34"])
      expect(parseRetryAfter(value, now)).toBeUndefined();
  });
});

describe("nextDelayMs", () => {
  const options = { baseMs: 1000, capMs: 300_000 };
  test("full jitter: between 0 and base * 2^(attempt-1)", () => {
    expect(nextDelayMs(1, undefined, { ...options, random: () => 0 })).toBe(0);
    expect(nextDelayMs(1, undefined, { ...options, random: () => 0.999999 })).toBe(999);
    expect(nextDelayMs(2, undefined, { ...options, random: () => 0.5 })).toBe(1000);
    expect(nextDelayMs(4, undefined, { ...options, random: () => 0.999999 })).toBe(7999);
  });
  test("capped however many attempts, and never negative or NaN", () => {
    for (const attempt of [10, 20, 100, 5000, Number.POSITIVE_INFINITY]) {
      const delay = nextDelayMs(attempt, undefined, { ...options, random: () => 0.999999 });
      expect(delay).toBeLessThan(300_000);
      expect(delay).toBeGreaterThan(299_000);
    }
    expect(nextDelayMs(9, undefined, { ...options, random: () => 0.999999 })).toBe(255_999);
    expect(nextDelayMs(0, undefined, { ...options, random: () => 0.5 })).toBe(500);
    expect(nextDelayMs(Number.NaN, undefined, { ...options, random: () => 0.5 })).toBe(500);
  });
  test("defaults: 1 s base, 5 min cap, real randomness within the bounds", () => {
    for (let i = 0; i < 200; i++) {
      const delay = nextDelayMs(3);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(4000);
    }
    expect(nextDelayMs(30, undefined, { random: () => 0.999999 })).toBeLessThan(300_000);
  });
  test("a receiver's Retry-After is honoured exactly, up to its own cap", () => {
    expect(nextDelayMs(1, 5000, { ...options, random: () => 0 })).toBe(5000);
    expect(nextDelayMs(8, 2000, options)).toBe(2000);
    expect(nextDelayMs(1, 10 * 3_600_000, options)).toBe(3_600_000);
    expect(nextDelayMs(1, 10 * 60_000, { ...options, retryAfterCapMs: 60_000 })).toBe(60_000);
  });
});
