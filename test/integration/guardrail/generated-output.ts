// Seeded outputs for the full-text gate's property test: from one seed, a text cut into chunks with gaps, artifacts
// emitted among them, how the leg ends and what the check will say. All content is Greek letters, so that any
// fragment of it, however small, is found in any channel; nothing else the runtime writes holds a Greek letter.
import type { Artifact } from "../../../src/protocol/index.ts";

/** A character of generated content. */
export const CONTENT = /[\u0370-\u03ff]/u;
/** The deny pattern of the gated profiles; generated words never hold an omega, so only a planted one matches. */
export const DENY_WORD = "ωωω";
const LETTERS = "αβγδεζηθικλμνξοπρστυφχψ";
const SEPARATORS = [" ", " ", " ", "·", "\n", ", "];

/** mulberry32: a small, fast, seeded PRNG with uniform output in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export type Step = { text: string; gapMs: number } | { artifact: Artifact; gapMs: number; circular?: boolean };
/** pass: every check passes; deny: the deny word is planted; throws: a data part the check cannot serialize. */
export type PlannedVerdict = "pass" | "deny" | "throws";

export interface GeneratedCase {
  seed: number;
  steps: Step[];
  ending: "complete" | "input" | "failure";
  /** The question of an "input" ending, or the HandlerFailure message of a "failure" ending (always refused). */
  message: string;
  verdict: PlannedVerdict;
  /** What the client must see in the end when the check passes: the text and the artifacts, in emission order. */
  text: string;
  artifacts: Artifact[];
}

export function generateCase(seed: number): GeneratedCase {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const word = () => Array.from({ length: int(2, 9) }, () => pick([...LETTERS])).join("");
  const words = (count: number) => Array.from({ length: count }, () => word() + pick(SEPARATORS)).join("");
  const gap = () => {
    const roll = random();
    return roll < 0.7 ? int(0, 4) : roll < 0.95 ? int(5, 25) : int(60, 120);
  };

  const roll = random();
  const verdict: PlannedVerdict = roll < 0.55 ? "pass" : roll < 0.9 ? "deny" : "throws";
  const endingRoll = random();
  const ending = endingRoll < 0.75 ? "complete" : endingRoll < 0.92 ? "input" : "failure";
  let text = random() < 0.1 ? "" : words(int(1, 250));
  const artifacts: Artifact[] = Array.from({ length: int(0, 2) }, (_, index) => ({
    artifactId: `extra-${index}`,
    name: `extra ${index}`,
    parts: random() < 0.5 ? [{ text: words(int(1, 20)) }] : [{ text: words(int(1, 5)) }, { data: { note: word() } }],
  }));
  let message = ending === "failure" ? `The lookup failed: ${words(3)}${DENY_WORD}` : `${words(int(1, 8))}?`;
  if (verdict === "deny") {
    const where = pick(["text", "artifact", "message"] as const);
    const first = artifacts[0]?.parts[0];
    if (where === "artifact" && first && "text" in first) first.text = `${first.text} ${DENY_WORD} `;
    else if (where === "message" && ending === "input") message = `${message} ${DENY_WORD}`;
    else {
      const at = text.indexOf(" ", Math.floor(random() * text.length));
      text = at < 0 ? `${text} ${DENY_WORD}` : `${text.slice(0, at)} ${DENY_WORD} ${text.slice(at)}`;
    }
  }

  const cuts = new Set<number>();
  for (let count = int(0, Math.min(30, text.length)); count > 0; count--) cuts.add(int(0, text.length));
  const bounds = [0, ...[...cuts].sort((a, b) => a - b), text.length];
  const steps: Step[] = [];
  for (let index = 1; index < bounds.length; index++) {
    steps.push({ text: text.slice(bounds[index - 1], bounds[index]), gapMs: gap() });
  }
  const circularAt = verdict === "throws" ? int(0, artifacts.length) : -1;
  const extras: Step[] = artifacts.map((artifact) => ({ artifact, gapMs: gap() }));
  if (circularAt >= 0) {
    extras.splice(circularAt, 0, { artifact: { artifactId: "loop", parts: [{ data: {} }] }, gapMs: 0, circular: true });
  }
  for (const extra of extras) steps.splice(int(0, steps.length), 0, extra);
  return { seed, steps, ending, message, verdict, text, artifacts: orderOfEmission(steps, text, artifacts) };
}

/** The artifacts as the client must finally see them: the text artifact where its first text was emitted. */
function orderOfEmission(steps: readonly Step[], text: string, artifacts: readonly Artifact[]): Artifact[] {
  const ordered: Artifact[] = [];
  let textPlaced = false;
  for (const step of steps) {
    if ("text" in step) {
      if (step.text !== "" && !textPlaced) {
        ordered.push({ artifactId: "response-1", name: "response", parts: [{ text }] });
        textPlaced = true;
      }
    } else if (!step.circular) ordered.push(artifacts.find((a) => a.artifactId === step.artifact.artifactId)!);
  }
  return ordered;
}

/** The outcome the client must see: the terminal or interrupted state and whether content arrives at all. */
export function expectedState(generated: GeneratedCase): string {
  if (generated.ending === "failure" || generated.verdict !== "pass") return "TASK_STATE_FAILED";
  return generated.ending === "input" ? "TASK_STATE_INPUT_REQUIRED" : "TASK_STATE_COMPLETED";
}
