// Parses the instructions of the `echo` and `faults` handlers: bracketed words in the text, e.g. "[sleep 300] hello".
// Pure: the handlers (echo.ts, faults.ts) act on them; docs/handlers.md lists them for users.

export type EchoInstruction =
  | { kind: "input" }
  | { kind: "auth" }
  | { kind: "fail" }
  | { kind: "crash" }
  | { kind: "hang" }
  | { kind: "progress" }
  | { kind: "sleep"; ms: number }
  | { kind: "chunks"; count: number; delayMs: number }
  | { kind: "tool"; name: string };

export type InstructionWord = EchoInstruction["kind"];

/** What `echo` obeys: nothing that can stop its worker or hold it for long. */
export const ECHO_WORDS: readonly InstructionWord[] = ["input", "auth", "fail", "progress", "sleep", "chunks", "tool"];
/** What `faults` obeys: echo's words and the ones that crash or hang a worker. */
export const FAULT_WORDS: readonly InstructionWord[] = [...ECHO_WORDS, "crash", "hang"];

/** How long echo may wait in one leg, [sleep]s and the delays between chunks together (ms), and how many chunks. */
export const ECHO_LIMITS = { waitMs: 10_000, chunks: 100 } as const;
/** The bounds of `faults`: larger values are lowered to them. */
export const FAULT_LIMITS = { sleepMs: 3_600_000, chunks: 10_000, chunkDelayMs: 60_000 } as const;

export interface EchoPlan {
  instructions: EchoInstruction[];
  /** The text without its instructions, trimmed: what the handler answers. */
  answer: string;
}

const patterns = new Map<readonly InstructionWord[], RegExp>();

function pattern(words: readonly InstructionWord[]): RegExp {
  let found = patterns.get(words);
  if (found === undefined) {
    found = new RegExp(`\\[(${words.join("|")})(?:\\s+([^\\]\\s]+))?(?:\\s+([^\\]\\s]+))?\\]`, "g");
    patterns.set(words, found);
  }
  return found;
}

/** A whole number as written, or `fallback` when it is not one. */
function count(text: string | undefined, fallback: number): number {
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback;
}

/**
 * The instructions among `words` in the order written, with the numbers as asked (defaults: [sleep] 1000 ms,
 * [chunks] 10 chunks 0 ms apart; [chunks 0] is one chunk). Other bracketed text stays in the answer.
 */
export function parseInstructions(text: string, words: readonly InstructionWord[]): EchoPlan {
  const instructions: EchoInstruction[] = [];
  const found = pattern(words);
  for (const match of text.matchAll(found)) {
    const [, word, first, second] = match;
    switch (word) {
      case "sleep":
        instructions.push({ kind: "sleep", ms: count(first, 1000) });
        break;
      case "chunks":
        instructions.push({ kind: "chunks", count: count(first, 10) || 1, delayMs: count(second, 0) });
        break;
      case "tool":
        if (first) instructions.push({ kind: "tool", name: first });
        break;
      case "input":
      case "auth":
      case "fail":
      case "crash":
      case "hang":
      case "progress":
        instructions.push({ kind: word });
        break;
    }
  }
  return { instructions, answer: text.replace(found, "").replace(/\s+/g, " ").trim() };
}

/** The instructions `echo` obeys; [crash] and [hang] are plain text to it. */
export function parseEcho(text: string): EchoPlan {
  return parseInstructions(text, ECHO_WORDS);
}

/** The [chunks] instruction that shapes the answer: the first one. */
export function chunking(plan: EchoPlan): Extract<EchoInstruction, { kind: "chunks" }> | undefined {
  return plan.instructions.find((step) => step.kind === "chunks");
}

/** Why echo refuses the plan (past ECHO_LIMITS), or undefined when it is within them. */
export function echoLimitProblem(plan: EchoPlan): string | undefined {
  const chunks = chunking(plan);
  if (chunks && chunks.count > ECHO_LIMITS.chunks)
    return `Echo sends at most ${ECHO_LIMITS.chunks} chunks (asked for ${chunks.count})`;
  let waitMs = chunks ? (chunks.count - 1) * chunks.delayMs : 0;
  for (const step of plan.instructions) if (step.kind === "sleep") waitMs += step.ms;
  if (waitMs > ECHO_LIMITS.waitMs)
    return `Echo waits at most ${ECHO_LIMITS.waitMs} ms in all, sleeps and chunk delays together (asked for ${waitMs} ms)`;
  return undefined;
}

/** The instructions `faults` obeys, with its numbers lowered to FAULT_LIMITS. */
export function parseFaults(text: string): EchoPlan {
  const plan = parseInstructions(text, FAULT_WORDS);
  const instructions = plan.instructions.map((step): EchoInstruction => {
    if (step.kind === "sleep") return { kind: "sleep", ms: Math.min(step.ms, FAULT_LIMITS.sleepMs) };
    if (step.kind === "chunks")
      return {
        kind: "chunks",
        count: Math.min(step.count, FAULT_LIMITS.chunks),
        delayMs: Math.min(step.delayMs, FAULT_LIMITS.chunkDelayMs),
      };
    return step;
  });
  return { instructions, answer: plan.answer };
}

/** Splits `text` into `count` nearly equal pieces (fewer when the text is shorter). */
export function splitChunks(text: string, count: number): string[] {
  const pieces = Math.max(1, Math.min(count, text.length));
  const size = Math.floor(text.length / pieces);
  let extra = text.length % pieces;
  const chunks: string[] = [];
  let at = 0;
  for (let i = 0; i < pieces; i++) {
    const length = size + (extra > 0 ? 1 : 0);
    if (extra > 0) extra--;
    chunks.push(text.slice(at, at + length));
    at += length;
  }
  return chunks;
}
