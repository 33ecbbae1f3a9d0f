// The `faults` handler, for load and fault testing only: echo's instructions without echo's limits, plus [crash] (exits
// the worker process) and [hang] (never finishes until the run is aborted). No profile uses it unless an operator
// binds one to it; a client of such a profile can stop workers at will, so it must never be offered to untrusted ones.

import { playEcho } from "./echo.ts";
import { type EchoInstruction, parseFaults } from "./echo-instructions.ts";
import { defineHandler, type HandlerContext, textOf } from "./handler-api.ts";

async function fault(ctx: HandlerContext, step: EchoInstruction): Promise<void> {
  if (step.kind === "crash") process.exit(1);
  if (step.kind === "hang")
    await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
}

export const faultsHandler = defineHandler("faults", async (ctx) => {
  return await playEcho(ctx, parseFaults(textOf(ctx.input)), (step) => fault(ctx, step));
});
