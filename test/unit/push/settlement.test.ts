// settlementFor: what the outbox records for each attempt outcome, the attempt limit, and the retry schedule.
import { describe, expect, test } from "bun:test";
import { settlementFor } from "../../../src/push/index.ts";

const NOW = 1_750_000_000_000;
const rules = { maxAttempts: 3, backoff: { baseMs: 1000, random: () => 0.5 } };
const now = async () => NOW;

describe("settlementFor", () => {
  test("delivered is done; 410 disables; give-up and refused are dead with their reason", async () => {
    expect(await settlementFor({ kind: "delivered", status: 204 }, 1, rules, now)).toEqual({ outcome: "done" });
    expect(
      await settlementFor({ kind: "disable", reason: "http status 410 gone", status: 410 }, 1, rules, now),
    ).toEqual({ outcome: "disable", reason: "http status 410 gone" });
    expect(await settlementFor({ kind: "give-up", reason: "http status 400", status: 400 }, 1, rules, now)).toEqual({
      outcome: "dead",
      reason: "http status 400",
    });
    expect(await settlementFor({ kind: "refused", reason: "private address 10.0.0.1" }, 1, rules, now)).toEqual({
      outcome: "dead",
      reason: "private address 10.0.0.1",
    });
  });

  test("a retry is scheduled on the given clock with jittered backoff, or at the receiver's Retry-After", async () => {
    const retry = { kind: "retry" as const, reason: "http status 503", status: 503 };
    expect(await settlementFor(retry, 1, rules, now)).toEqual({ outcome: "retry", atMs: NOW + 500 });
    expect(await settlementFor(retry, 2, rules, now)).toEqual({ outcome: "retry", atMs: NOW + 1000 });
    expect(await settlementFor({ ...retry, retryAfterMs: 7000 }, 1, rules, now)).toEqual({
      outcome: "retry",
      atMs: NOW + 7000,
    });
  });

  test("the last allowed attempt that fails is dead: gave up after N attempts, with the last reason", async () => {
    const retry = { kind: "retry" as const, reason: "network error ECONNREFUSED" };
    expect(await settlementFor(retry, 3, rules, now)).toEqual({
      outcome: "dead",
      reason: "gave up after 3 attempts: network error ECONNREFUSED",
    });
  });
});
