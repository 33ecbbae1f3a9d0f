// Runs several guardrails on one output as one: in parallel, each within a timeout, passing only when all pass.
// Fail-closed: a check that throws, rejects, answers no verdict, times out or is aborted counts as failed.
import { fail, type GuardedOutput, type Guardrail, type GuardrailContext, PASS, type Verdict } from "./guardrail.ts";

export type ComposeOptions = {
  /** Each check's time budget, in milliseconds; past it the check fails and its signal is aborted. */
  timeoutMs: number;
};

/**
 * A guardrail that passes only when every one of `guardrails` passes (none passes vacuously).
 * The checks run in parallel; the first failure settles the verdict and aborts the checks still running.
 * The failing reason names the guardrail: `"<name>: <why>"`.
 */
export function composeGuardrails(guardrails: readonly Guardrail[], options: ComposeOptions): Guardrail {
  const members = [...guardrails];
  return {
    name: `all(${members.map((guardrail) => guardrail.name).join(",")})`,
    check: (output, context) => checkAll(members, options.timeoutMs, output, context),
  };
}

async function checkAll(
  guardrails: readonly Guardrail[],
  timeoutMs: number,
  output: GuardedOutput,
  context: GuardrailContext,
): Promise<Verdict> {
  if (context.signal.aborted) return fail(`aborted before the check: ${abortReason(context.signal)}`);
  const stop = new AbortController();
  const signal = AbortSignal.any([context.signal, stop.signal]);
  const runs = guardrails.map((guardrail) =>
    checkOne(guardrail, timeoutMs, output, { ...context, signal }).then((verdict) => {
      if (!verdict.pass) stop.abort(new Error("another guardrail failed"));
      return verdict;
    }),
  );
  try {
    const firstFailure = new Promise<Verdict>((resolve) => {
      for (const run of runs) void run.then((verdict) => (verdict.pass ? undefined : resolve(verdict)));
    });
    return await Promise.race([firstFailure, Promise.all(runs).then(() => PASS)]);
  } finally {
    stop.abort(new Error("the composed check settled"));
  }
}

/** One check, turned into a verdict whatever it does; never rejects, settles within `timeoutMs` (or on abort). */
function checkOne(
  guardrail: Guardrail,
  timeoutMs: number,
  output: GuardedOutput,
  context: GuardrailContext,
): Promise<Verdict> {
  const own = new AbortController();
  const signal = AbortSignal.any([context.signal, own.signal]);
  return new Promise<Verdict>((resolve) => {
    let settled = false;
    const settle = (verdict: Verdict) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      context.signal.removeEventListener("abort", onAbort);
      resolve(verdict);
    };
    const onAbort = () => settle(fail(`${guardrail.name}: aborted: ${abortReason(context.signal)}`));
    const timer = setTimeout(() => {
      own.abort(new Error(`timed out after ${timeoutMs} ms`));
      settle(fail(`${guardrail.name}: timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    context.signal.addEventListener("abort", onAbort, { once: true });
    if (context.signal.aborted) return onAbort();
    let answer: Promise<Verdict>;
    try {
      answer = guardrail.check(output, { ...context, signal });
    } catch (error) {
      return settle(fail(`${guardrail.name}: threw: ${describe(error)}`));
    }
    Promise.resolve(answer).then(
      (verdict: unknown) => settle(asVerdict(guardrail.name, verdict)),
      (error: unknown) => settle(fail(`${guardrail.name}: rejected: ${describe(error)}`)),
    );
  });
}

/** Only `{ pass: true }` passes; `{ pass: false }` keeps its reason; anything else is not a verdict and fails. */
function asVerdict(name: string, value: unknown): Verdict {
  if (typeof value !== "object" || value === null) return fail(`${name}: answered no verdict`);
  const { pass, reason } = value as { pass?: unknown; reason?: unknown };
  if (pass === true) return PASS;
  if (pass === false) return fail(`${name}: ${typeof reason === "string" && reason !== "" ? reason : "failed"}`);
  return fail(`${name}: answered no verdict`);
}

function abortReason(signal: AbortSignal): string {
  return describe(signal.reason ?? "aborted");
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === "string" ? error : "a non-Error value";
}
