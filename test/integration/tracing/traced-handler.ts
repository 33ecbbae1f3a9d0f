// A handler that makes a span of its own with ctx.tracer (as an agent author would), then answers with the text.
import { defineHandler, textOf } from "../../../src/index.ts";

export const traced = defineHandler("traced", async (ctx) => {
  const text = textOf(ctx.input);
  await ctx.tracer.startActiveSpan("look up the answer", async (span) => {
    span.setAttribute("answer.length", text.length);
    span.end();
  });
  await ctx.emit.text(text);
});
