// The maximum-length guardrail: passes at exactly maxLength characters, fails one character beyond, counting code
// points of the text and of artifact text parts, not data.
import { describe, expect, test } from "bun:test";
import { GuardrailConfigError, maxLengthGuardrail } from "../../../src/guardrail/index.ts";
import { artifact, reasonOf, textOutput, verdict } from "./fixtures.ts";

describe("maxLengthGuardrail", () => {
  const guardrail = maxLengthGuardrail(10);

  test("exactly maxLength passes, one more fails", async () => {
    expect(await verdict(guardrail, "a".repeat(10))).toEqual({ pass: true });
    expect(reasonOf(await verdict(guardrail, "a".repeat(11)))).toBe("output has 11 characters, more than maxLength 10");
  });

  test("the text and artifact text parts add up", async () => {
    expect(await verdict(guardrail, textOutput("12345", artifact({ text: "67890" })))).toEqual({ pass: true });
    expect(await verdict(guardrail, textOutput("12345", artifact({ text: "678901" })))).toMatchObject({
      pass: false,
    });
  });

  test("a character outside the BMP counts once", async () => {
    expect(await verdict(guardrail, "😀".repeat(10))).toEqual({ pass: true });
    expect(await verdict(guardrail, "😀".repeat(11))).toMatchObject({ pass: false });
  });

  test("data parts are not counted", async () => {
    const output = textOutput("short", artifact({ data: { long: "x".repeat(1000) } }));
    expect(await verdict(guardrail, output)).toEqual({ pass: true });
  });

  test("a limit that is not a positive integer refuses to build", () => {
    expect(() => maxLengthGuardrail(0)).toThrow(GuardrailConfigError);
    expect(() => maxLengthGuardrail(2.5)).toThrow(GuardrailConfigError);
  });
});
