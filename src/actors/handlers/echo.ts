// The `echo` handler: deterministic, for tests, demos and conformance. It answers with the text it got (as one
// artifact) and follows the harmless instructions parsed by echo-instructions.ts, within ECHO_LIMITS, so that a client
// cannot turn it against the worker; docs/handlers.md documents them. `faults` (faults.ts) plays the same way.
import {
  chunking,
  type EchoInstruction,
  type EchoPlan,
  echoLimitProblem,
  parseEcho,
  splitChunks,
} from "./echo-instructions.ts";
import { defineHandler, type HandlerContext, HandlerFailure, type HandlerResult, textOf } from "./handler-api.ts";

/** Resolves after `ms`, or rejects with the signal's reason as soon as it fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** Acts on one instruction other than [crash] and [hang]; a result ends the leg there. */
async function act(ctx: HandlerContext, step: EchoInstruction): Promise<HandlerResult | undefined> {
  switch (step.kind) {
    case "input":
      return ctx.requireInput("Echo asks for more input: send another message to continue.");
    case "auth":
      return ctx.requireAuth("Echo requires authorization: send another message once authorized.");
    case "fail":
      throw new HandlerFailure("Echo failed as instructed");
    case "progress":
      await ctx.emit.progress("Echo is working");
      break;
    case "sleep":
      await sleep(step.ms, ctx.signal);
      break;
    case "tool": {
      const result = await ctx.tools.call(step.name, {});
      await ctx.emit.text(`${JSON.stringify(result)}\n`);
      break;
    }
    case "chunks":
    case "crash":
    case "hang":
      break;
  }
  return undefined;
}

/**
 * Runs the plan's instructions in the order written, then answers (in chunks when asked). `fault` acts on [crash] and
 * [hang], which only the `faults` handler's plans hold.
 */
export async function playEcho(
  ctx: HandlerContext,
  plan: EchoPlan,
  fault: (step: EchoInstruction) => Promise<void> = async () => {},
): Promise<HandlerResult | undefined> {
  for (const step of plan.instructions) {
    if (step.kind === "crash" || step.kind === "hang") await fault(step);
    const result = await act(ctx, step);
    if (result) return result;
  }
  const chunks = chunking(plan);
  if (plan.answer === "") return;
  if (!chunks) {
    await ctx.emit.text(plan.answer);
    return;
  }
  for (const [index, chunk] of splitChunks(plan.answer, chunks.count).entries()) {
    if (index > 0 && chunks.delayMs > 0) await sleep(chunks.delayMs, ctx.signal);
    await ctx.emit.text(chunk);
  }
}

export const echoHandler = defineHandler("echo", async (ctx) => {
  const plan = parseEcho(textOf(ctx.input));
  // Refused before any instruction runs: a plan past the limits does nothing half way.
  const problem = echoLimitProblem(plan);
  if (problem !== undefined) throw new HandlerFailure(problem);
  return await playEcho(ctx, plan);
});

/** The `noop` handler: completes at once with no output (for benchmarks). */
export const noopHandler = defineHandler("noop", async () => {});
