// Parses the instructions the `echo` handler understands: bracketed words in the text, e.g. "[sleep 300] hello".
// Pure: the handler (echo.ts) acts on them; docs/handlers.md lists them for users.

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

export interface EchoPlan {
  instructions: EchoInstruction[];
  /** The text without its instructions, trimmed: what echo answers. */
  answer: string;
}

const PATTERN = /\[(input|auth|fail|crash|hang|progress|sleep|chunks|tool)(?:\s+([^\]\s]+))?(?:\s+([^\]\s]+))?\]/g;

function count(text: string | undefined, fallback: number, max: number): number {
  const value = Number(text);
  return Number.isInteger(value) && value >= 0 ? Math.min(value, max) : fallback;
}

export function parseEcho(text: string): EchoPlan {
  const instructions: EchoInstruction[] = [];
  for (const match of text.matchAll(PATTERN)) {
    const [, word, first, second] = match;
    switch (word) {
      case "sleep":
        instructions.push({ kind: "sleep", ms: count(first, 1000, 3_600_000) });
        break;
      case "chunks":
        instructions.push({ kind: "chunks", count: count(first, 10, 10_000) || 1, delayMs: count(second, 0, 60_000) });
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
  return { instructions, answer: text.replace(PATTERN, "").replace(/\s+/g, " ").trim() };
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
