// The supervisor's restart decisions: exponential backoff per slot and the OTP-style intensity limit.
import { expect, test } from "bun:test";
import { countsTowardIntensity, exitCause, RestartPolicy } from "../../../src/actors/restart-policy.ts";

test("backoff doubles for quick successive exits of a slot, up to the maximum", () => {
  const policy = new RestartPolicy({ intensity: 100, periodMs: 60_000, baseDelayMs: 250, maxDelayMs: 1000 });
  const delays = [0, 1, 2, 3, 4].map((i) => policy.onExit(0, 1000 * i, 500));
  expect(delays).toEqual([
    { action: "restart", delayMs: 250 },
    { action: "restart", delayMs: 500 },
    { action: "restart", delayMs: 1000 },
    { action: "restart", delayMs: 1000 },
    { action: "restart", delayMs: 1000 },
  ]);
  // another slot has its own backoff; a slot whose actor ran a whole period starts over
  expect(policy.onExit(1, 6000, 500)).toEqual({ action: "restart", delayMs: 250 });
  expect(policy.onExit(0, 7000, 60_000)).toEqual({ action: "restart", delayMs: 250 });
});

test("more than `intensity` restarts within the period: give up", () => {
  const policy = new RestartPolicy({ intensity: 2, periodMs: 10_000 });
  expect(policy.onExit(0, 0, 10).action).toBe("restart");
  expect(policy.onExit(1, 1000, 10).action).toBe("restart");
  expect(policy.onExit(0, 2000, 10)).toEqual({ action: "give-up", restarts: 3 });
});

test("restarts older than the period no longer count", () => {
  const policy = new RestartPolicy({ intensity: 2, periodMs: 10_000 });
  policy.onExit(0, 0, 10);
  policy.onExit(0, 1000, 10);
  expect(policy.onExit(0, 10_500, 10).action).toBe("restart");
  expect(policy.onExit(0, 10_600, 10).action).toBe("give-up");
});

test("intensity 0 gives up at the first unexpected exit", () => {
  expect(new RestartPolicy({ intensity: 0, periodMs: 1000 }).onExit(0, 0, 10).action).toBe("give-up");
});

test("exits the supervisor caused itself (watchdog kills) are backed off but never make it give up", () => {
  const policy = new RestartPolicy({ intensity: 1, periodMs: 10_000, baseDelayMs: 250, maxDelayMs: 1000 });
  const delays = [0, 1, 2, 3].map((i) => policy.onExit(0, 100 * i, 50, false));
  expect(delays.map((d) => d.action)).toEqual(["restart", "restart", "restart", "restart"]);
  expect(delays.at(-1)).toEqual({ action: "restart", delayMs: 1000 });
  // they left the intensity budget untouched: one counted exit is still allowed, the second gives up
  expect(policy.onExit(1, 500, 50).action).toBe("restart");
  expect(policy.onExit(1, 600, 50).action).toBe("give-up");
});

test("an exit's cause: a run's when a handler was running, the actor's own when starting or idle", () => {
  expect(exitCause("busy", undefined)).toBe("run");
  expect(exitCause("idle", undefined)).toBe("idle");
  expect(exitCause("starting", undefined)).toBe("startup");
  expect(exitCause("busy", "stalled")).toBe("stalled");
  expect(exitCause("idle", "memory")).toBe("memory");
  // An actor the watchdog killed before it was up never ran a run: it failed at start.
  expect(exitCause("starting", "stalled")).toBe("startup");
  expect(
    (["startup", "idle", "run", "stalled", "memory"] as const).filter((cause) => countsTowardIntensity(cause)),
  ).toEqual(["startup", "idle"]);
});
