// Composition: all guardrails must pass; one that fails, throws, rejects, answers no verdict, hangs past its timeout
// or is aborted fails the whole check, never lets the output through, and the reason names which one and why.
import { describe, expect, test } from "bun:test";
import { composeGuardrails, type Guardrail, type Verdict } from "../../../src/guardrail/index.ts";
import { context, reasonOf, textOutput } from "./fixtures.ts";

const passing = (name: string): Guardrail => ({ name, check: async () => ({ pass: true }) });
const failing = (name: string, reason: string): Guardrail => ({ name, check: async () => ({ pass: false, reason }) });

/** Never answers; records the signal it was given and whether that signal was aborted. */
function hanging(name: string) {
  const seen: { signal?: AbortSignal } = {};
  const guardrail: Guardrail = {
    name,
    check: (_output, { signal }) => {
      seen.signal = signal;
      return new Promise<Verdict>(() => {});
    },
  };
  return { guardrail, seen };
}

const output = textOutput("hello");

describe("composeGuardrails", () => {
  test("passes when every guardrail passes", async () => {
    const all = composeGuardrails([passing("a"), passing("b"), passing("c")], { timeoutMs: 1000 });
    expect(await all.check(output, context())).toEqual({ pass: true });
    expect(all.name).toBe("all(a,b,c)");
  });

  test("fails when one fails, naming it and its reason", async () => {
    const all = composeGuardrails([passing("a"), failing("b", "too rude")], { timeoutMs: 1000 });
    expect(reasonOf(await all.check(output, context()))).toBe("b: too rude");
  });

  test("a guardrail that throws fails the check", async () => {
    const throwing: Guardrail = {
      name: "boom",
      check: () => {
        throw new RangeError("bad state");
      },
    };
    const all = composeGuardrails([passing("a"), throwing], { timeoutMs: 1000 });
    expect(reasonOf(await all.check(output, context()))).toBe("boom: threw: RangeError: bad state");
  });

  test("a guardrail that rejects fails the check", async () => {
    const rejecting: Guardrail = { name: "nope", check: async () => Promise.reject(new Error("network down")) };
    const all = composeGuardrails([rejecting, passing("a")], { timeoutMs: 1000 });
    expect(reasonOf(await all.check(output, context()))).toBe("nope: rejected: Error: network down");
  });

  test("a guardrail that answers no verdict fails the check", async () => {
    const odd = (name: string, value: unknown): Guardrail => ({ name, check: async () => value as Verdict });
    for (const value of [undefined, null, {}, { pass: "yes" }, { pass: 1 }]) {
      const all = composeGuardrails([odd("odd", value)], { timeoutMs: 1000 });
      expect(reasonOf(await all.check(output, context()))).toBe("odd: answered no verdict");
    }
  });

  test("a guardrail hanging past its timeout fails within about the timeout, and its signal is aborted", async () => {
    const { guardrail, seen } = hanging("slow");
    const all = composeGuardrails([passing("a"), guardrail], { timeoutMs: 150 });
    const started = performance.now();
    const result = await all.check(output, context());
    const elapsed = performance.now() - started;
    expect(reasonOf(result)).toBe("slow: timed out after 150 ms");
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1000);
    expect(seen.signal?.aborted).toBe(true);
  });

  test("a failure does not wait for a hanging guardrail, and aborts it", async () => {
    const { guardrail, seen } = hanging("slow");
    const all = composeGuardrails([guardrail, failing("fast", "no")], { timeoutMs: 10_000 });
    const started = performance.now();
    expect(reasonOf(await all.check(output, context()))).toBe("fast: no");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(seen.signal?.aborted).toBe(true);
  });

  test("an already aborted signal fails without running any guardrail", async () => {
    let ran = false;
    const watched: Guardrail = {
      name: "watched",
      check: async () => {
        ran = true;
        return { pass: true };
      },
    };
    const controller = new AbortController();
    controller.abort(new Error("client went away"));
    const all = composeGuardrails([watched], { timeoutMs: 1000 });
    expect(reasonOf(await all.check(output, context({ signal: controller.signal })))).toContain("aborted");
    expect(ran).toBe(false);
  });

  test("aborting the signal mid-check fails at once", async () => {
    const { guardrail, seen } = hanging("slow");
    const controller = new AbortController();
    const all = composeGuardrails([guardrail, passing("a")], { timeoutMs: 10_000 });
    const pending = all.check(output, context({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("shutting down")), 20);
    const started = performance.now();
    expect(reasonOf(await pending)).toBe("slow: aborted: Error: shutting down");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(seen.signal?.aborted).toBe(true);
  });

  test("the guardrails run in parallel", async () => {
    const slowPass = (name: string): Guardrail => ({
      name,
      check: () => new Promise((resolve) => setTimeout(() => resolve({ pass: true }), 400)),
    });
    const all = composeGuardrails([slowPass("a"), slowPass("b"), slowPass("c")], { timeoutMs: 5000 });
    const started = performance.now();
    expect(await all.check(output, context())).toEqual({ pass: true });
    expect(performance.now() - started).toBeLessThan(1000); // one after another: 1,200 ms
  });

  test("no guardrail at all passes", async () => {
    expect(await composeGuardrails([], { timeoutMs: 1000 }).check(output, context())).toEqual({ pass: true });
  });
});
