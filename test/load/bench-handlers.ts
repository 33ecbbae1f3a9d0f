// The bench's own handlers, loaded by `a2a-runtime work --handlers test/load/bench-handlers.ts`: an LLM-like answer
// streamed in small deltas.
import { defineHandler, HandlerFailure, textOf } from "../../src/actors/index.ts";

/** Bytes per delta: about what an LLM token stream delivers per chunk. */
export const DELTA_BYTES = 20;

const PROSE = "The quick brown fox jumps over the lazy dog while the agent streams its answer to the client. ";

/** The answer's text: `size` bytes of ASCII prose (so characters and bytes agree). */
export function answerText(size: number): string {
  return PROSE.repeat(Math.ceil(size / PROSE.length)).slice(0, size);
}

/**
 * `stream-deltas`: the message's text is the answer size in bytes, optionally followed by a pause in ms; the answer is
 * emitted in DELTA_BYTES deltas, one awaited `ctx.emit.text` per delta, as an LLM agent loop forwards the tokens of a
 * streamed completion, with the pause after each delta (a model's pace) when one is given. Stops when the run is
 * aborted (a cancel).
 */
export const streamDeltas = defineHandler("stream-deltas", async (ctx) => {
  const [sizeText = "", pauseText = "0"] = textOf(ctx.input).trim().split(/\s+/);
  const size = Number(sizeText);
  const pauseMs = Number(pauseText);
  if (!Number.isSafeInteger(size) || size < 0 || !Number.isSafeInteger(pauseMs) || pauseMs < 0) {
    throw new HandlerFailure("The message must be an answer size in bytes, optionally followed by a pause in ms");
  }
  const answer = answerText(size);
  for (let at = 0; at < answer.length && !ctx.signal.aborted; at += DELTA_BYTES) {
    await ctx.emit.text(answer.slice(at, at + DELTA_BYTES));
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
});
