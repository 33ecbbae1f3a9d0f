// The `echo` handler: deterministic, for tests, demos and conformance. It answers with the text it got (as one
// artifact) and follows the instructions parsed by echo-instructions.ts; docs/handlers.md documents them.
import { type EchoInstruction, parseEcho, splitChunks } from "./echo-instructions.ts";
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

async function act(ctx: HandlerContext, step: EchoInstruction): Promise<HandlerResult | undefined> {
  switch (step.kind) {
    case "input":
      return ctx.requireInput("Echo asks for more input: send another message to continue.");
    case "auth":
      return ctx.requireAuth("Echo requires authorization: send another message once authorized.");
    case "fail":
      throw new HandlerFailure("Echo failed as instructed");
    case "crash":
      process.exit(1);
      break;
    case "hang":
      await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
      break;
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
      break;
  }
  return undefined;
}

export const echoHandler = defineHandler("echo", async (ctx) => {
  const { instructions, answer } = parseEcho(textOf(ctx.input));
  for (const step of instructions) {
    const result = await act(ctx, step);
    if (result) return result;
  }
  const chunking = instructions.find((step) => step.kind === "chunks");
  if (answer === "") return;
  if (!chunking) {
    await ctx.emit.text(answer);
    return;
  }
  for (const [index, chunk] of splitChunks(answer, chunking.count).entries()) {
    if (index > 0 && chunking.delayMs > 0) await sleep(chunking.delayMs, ctx.signal);
    await ctx.emit.text(chunk);
  }
});

/** The `noop` handler: completes at once with no output (for benchmarks). */
export const noopHandler = defineHandler("noop", async () => {});
